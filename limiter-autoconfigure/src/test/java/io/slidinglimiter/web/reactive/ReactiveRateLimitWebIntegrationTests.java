package io.slidinglimiter.web.reactive;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.web.ReactiveRateLimitFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet stack's web tests, run again on WebFlux: a real Reactor Netty server, spoken to over
 * real HTTP by a {@link WebTestClient} bound to it. Each test uses its own limits or keys, since
 * the application (and its counters) is shared by the class.
 */
@SpringBootTest(classes = { ReactiveTestApplication.class, ReactiveRateLimitWebIntegrationTests.Planned.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "limiter.limits.ruled.limit=2",
                "limiter.limits.ruled.window=1m", "limiter.http.rules[0].limit=ruled",
                "limiter.http.rules[0].path=/ruled/**", "limiter.http.rules[0].methods=GET",
                "limiter.http.rules[0].key=#clientAddress", "limiter.limits.lookups.limit=2",
                "limiter.limits.lookups.window=1m", "limiter.http.rules[1].limit=lookups",
                "limiter.http.rules[1].path=/lookup/**", "limiter.http.rules[1].charge=#status == 404 ? 1 : 0",
                "limiter.limits.reactive-shadow.limit=1", "limiter.limits.reactive-shadow.window=1m",
                "limiter.limits.reactive-shadow.shadow=true", "limiter.limits.reactive-plans.limit=1",
                "limiter.limits.reactive-plans.window=1m", "limiter.limits.reactive-plans.plans.pro.limit=3",
                "limiter.limits.reactive-plans.plan=#request.headers.getFirst('X-Plan')" })
class ReactiveRateLimitWebIntegrationTests {

    @LocalServerPort
    private int port;

    @Autowired
    private ReactiveTestApplication.Quotes quotes;

    @Autowired
    private ReactiveRateLimitFilter filter;

    private WebTestClient client;

    @BeforeEach
    void bindToTheRunningServer() {
        this.client = ReactiveHttp.client(this.port);
    }

    @Test
    void overTheLimitIs429WithRetryAfterTheHeadersAndAProblemBodyWhateverTheCatchAllHandlerSays() {
        get("/hello/secret-key-42").expectStatus().isOk().expectBody(String.class).isEqualTo("hello secret-key-42");
        get("/hello/secret-key-42").expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit-Policy", "\"hello\";q=2;w=60")
                .expectHeader().valueEquals("RateLimit", "\"hello\";r=0;t=60");
        EntityExchangeResult<String> denied = get("/hello/secret-key-42").expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("Retry-After", "60")
                .expectHeader().valueEquals("RateLimit-Policy", "\"hello\";q=2;w=60")
                .expectHeader().valueEquals("RateLimit", "\"hello\";r=0;t=60")
                .expectHeader().contentTypeCompatibleWith("application/problem+json")
                .expectBody(String.class).returnResult();
        assertThat(denied.getResponseBody())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"title\":\"Too Many Requests\"").contains("\"status\":429")
                .contains("\"violated-policies\":[\"hello\"]").contains("\"retryAfter\":60")
                .doesNotContain("caught by the application").doesNotContain("secret-key-42");
        assertThat(denied.getResponseHeaders().toString()).doesNotContain("secret-key-42");
    }

    @Test
    void aFluxIsLimitedToo() {
        get("/stream").expectStatus().isOk().expectBody(String.class).isEqualTo("abc");
        get("/stream").expectStatus().isEqualTo(429).expectHeader().valueEquals("RateLimit", "\"stream\";r=0;t=60");
    }

    @Test
    void urlRulesRejectBeforeAnyHandlerAndGetRulesCoverHead() {
        get("/ruled/1").expectStatus().isOk();
        this.client.head().uri("/ruled/2").exchange().expectStatus().isOk();
        get("/ruled/3").expectStatus().isEqualTo(429).expectHeader().valueEquals("RateLimit-Policy",
                "\"ruled\";q=2;w=60");
    }

    @Test
    void keysSeeThePrincipalAndTheRequest() {
        this.client.get().uri("/who").headers((headers) -> headers.setBasicAuth("alice", "pw")).exchange()
                .expectStatus().isOk();
        this.client.get().uri("/who").headers((headers) -> headers.setBasicAuth("bob", "pw")).exchange()
                .expectStatus().isOk();
        this.client.get().uri("/who").headers((headers) -> headers.setBasicAuth("alice", "pw")).exchange()
                .expectStatus().isEqualTo(429);
        get("/address").expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"address\";r=4;t=60");
    }

    @Test
    void aPlanChoosesTheQuotaOfTheSameCounter() {
        get("/planned/ada").expectStatus().isOk();
        get("/planned/ada").expectStatus().isEqualTo(429);
        this.client.get().uri("/planned/ada").header("X-Plan", "pro").exchange().expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit-Policy", "\"reactive-plans\";q=3;w=60")
                .expectHeader().valueEquals("RateLimit", "\"reactive-plans\";r=1;t=60");
    }

    @Test
    void aMissingKeyIs400WithoutRetryAfter() {
        get("/who").expectStatus().isBadRequest().expectHeader().doesNotExist("Retry-After")
                .expectHeader().contentTypeCompatibleWith("application/problem+json");
    }

    @Test
    void severalLimitsAreAllOrNothing() {
        for (String user : new String[] { "ann", "ann", "ann" }) {
            get("/both/" + user).expectStatus().isOk();
        }
        get("/both/ann").expectStatus().isEqualTo(429);
        get("/both/ben").expectStatus().isOk();
        get("/both/ben").expectStatus().isEqualTo(429).expectHeader()
                .valueEquals("RateLimit-Policy", "\"per-user\";q=3;w=60, \"global\";q=4;w=60");
    }

    @Test
    void aMonoBuiltAndNeverSubscribedToConsumesNothingAndEachSubscriptionIsDecided() {
        for (int i = 0; i < 5; i++) {
            this.quotes.quote();
        }
        assertThat(this.quotes.served()).isZero();
        get("/quote").expectStatus().isOk().expectBody(String.class).isEqualTo("quote 1");
        get("/quote").expectStatus().isOk();
        get("/quote").expectStatus().isEqualTo(429);
        assertThat(this.quotes.served()).as("the method's work runs only when admitted").isEqualTo(2);
    }

    @Test
    void costsAreTakenAndABadCostIs400() {
        get("/reports?pages=3").expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit", "\"report-pages\";r=2;t=60");
        get("/reports?pages=3").expectStatus().isEqualTo(429);
        get("/reports?pages=2").expectStatus().isOk();
        get("/reports?pages=9").expectStatus().isBadRequest().expectHeader().doesNotExist("Retry-After")
                .expectBody(String.class).value((body) -> assertThat(body).contains("\"status\":400")
                        .contains("report-pages"));
    }

    @Test
    void aConditionThatFailsIsTheApplicationsErrorNotARejection() {
        get("/broken-condition").expectStatus().isEqualTo(500).expectBody(String.class)
                .isEqualTo("caught by the application");
    }

    /** A reservation of 200 settled to the 400 a Mono emitted: three fit in 1 000, the header shows each settle. */
    @Test
    void aMonosChargeSeesTheValueItEmitted() {
        get("/tokens/acme?used=400").expectStatus().isOk().expectHeader()
                .valueEquals("RateLimit", "\"reactive-tokens\";r=600;t=60");
        get("/tokens/acme?used=400").expectStatus().isOk();
        get("/tokens/acme?used=400").expectStatus().isOk();
        get("/tokens/acme?used=400").expectStatus().isEqualTo(429);
    }

    /** A Flux's charge sees how many elements it emitted: 3 of 5, then 6, then no room for one more. */
    @Test
    void aFluxsChargeSeesHowManyElementsItEmitted() {
        // A stream is settled when it completes: each body is read to its end before the next call.
        get("/rows").expectStatus().isOk().expectBody(String.class).isEqualTo("abc");
        get("/rows").expectStatus().isOk().expectBody(String.class).isEqualTo("abc");
        get("/rows").expectStatus().isEqualTo(429);
    }

    @Test
    void aUrlRuleChargesByTheResponsesStatus() {
        for (int i = 0; i < 4; i++) {
            get("/lookup/known").expectStatus().isOk();
        }
        get("/lookup/missing-1").expectStatus().isNotFound();
        get("/lookup/missing-2").expectStatus().isNotFound();
        get("/lookup/known").expectStatus().isEqualTo(429);
    }

    @Test
    void aShadowLimitNeverRejectsAndShowsNoHeader() {
        for (int i = 0; i < 3; i++) {
            get("/shadowed").expectStatus().isOk().expectHeader().doesNotExist("RateLimit");
        }
    }

    @Test
    void theFilterRunsAfterSpringSecurity() {
        assertThat(this.filter.getOrder()).isEqualTo(-90);
    }

    private WebTestClient.ResponseSpec get(String path) {
        return this.client.get().uri(path).exchange();
    }

    /** A limit with plans, whose configuration only this class gives. */
    @RestController
    static class Planned {

        @GetMapping("/planned/{customer}")
        @RateLimited(name = "reactive-plans", key = "#customer")
        public Mono<String> planned(@PathVariable String customer) {
            return Mono.just(customer);
        }

    }

}
