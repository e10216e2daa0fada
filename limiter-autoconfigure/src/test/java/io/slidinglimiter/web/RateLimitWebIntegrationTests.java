package io.slidinglimiter.web;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real server, spoken to over real HTTP. Each test uses its own limits or keys, since the
 * application (and its counters) is shared by the class.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "limiter.limits.ruled.limit=2", "limiter.limits.ruled.window=1m",
                "limiter.limits.ruled-too.limit=4", "limiter.limits.ruled-too.window=1m",
                "limiter.http.rules[0].limit=ruled", "limiter.http.rules[0].path=/ruled/**",
                "limiter.http.rules[0].methods=GET", "limiter.http.rules[0].key=#request.remoteAddr",
                "limiter.http.rules[1].limit=ruled-too", "limiter.http.rules[1].path=/annotated-and-ruled" })
class RateLimitWebIntegrationTests {

    @LocalServerPort
    private int port;

    @Autowired
    private ManualTimeSource time;

    @Autowired
    private WebTestApplication.Endpoints endpoints;

    @Test
    void overTheLimitIs429WithRetryAfterTheHeadersAndAProblemBody() throws Exception {
        assertThat(get("/hello/secret-key-42").statusCode()).isEqualTo(200);
        assertThat(get("/hello/secret-key-42").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/hello/secret-key-42");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isEqualTo(60);
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"hello\";q=2;w=60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"hello\";r=0;t=60");
        assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(denied.body())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"title\":\"Too Many Requests\"").contains("\"status\":429")
                .contains("\"violated-policies\":[\"hello\"]").contains("\"retryAfter\":60")
                .contains("\"detail\":\"Rate limit 'hello' of 2 per 60s exceeded; retry after 60s.\"")
                .doesNotContain("secret-key-42");
        assertThat(denied.headers().map().toString()).doesNotContain("secret-key-42");
    }

    @Test
    void allowedResponsesCarryTheHeadersToo() throws Exception {
        HttpResponse<String> first = get("/hello/headers-first");
        assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"hello\";q=2;w=60");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"hello\";r=1;t=60");
        assertThat(first.headers().firstValue("Retry-After")).isEmpty();
    }

    /** SPEC §3: {@code #clientAddress} is the client's IP address, as in WebFlux. */
    @Test
    void keysCanUseTheClientAddress() throws Exception {
        assertThat(get("/by-address").statusCode()).isEqualTo(200);
        assertThat(get("/by-address").statusCode()).isEqualTo(429);
    }

    @Test
    void retryAfterIsRoundedUpAndNeverZero() throws Exception {
        long now = this.time.currentTimeMillis();
        get("/hello/round-up");
        get("/hello/round-up");
        // 59.5 s later the permits, counted in a slot that started at "now", leave in 0.5 s.
        this.time.advanceMillis(59_500 - Math.floorMod(now, 6_000));
        HttpResponse<String> denied = get("/hello/round-up");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("1");
        this.time.advanceMillis(500);
        assertThat(get("/hello/round-up").statusCode()).isEqualTo(200);
    }

    @Test
    void pathVariableKeysAreIndependent() throws Exception {
        get("/hello/path-a");
        get("/hello/path-a");
        assertThat(get("/hello/path-a").statusCode()).isEqualTo(429);
        assertThat(get("/hello/path-b").statusCode()).isEqualTo(200);
    }

    @Test
    void headerKeysAreIndependentAndAMissingHeaderIsDenied() throws Exception {
        assertThat(send(request("/by-header").header("X-Api-Key", "k1")).statusCode()).isEqualTo(200);
        assertThat(send(request("/by-header").header("X-Api-Key", "k1")).statusCode()).isEqualTo(200);
        assertThat(send(request("/by-header").header("X-Api-Key", "k1")).statusCode()).isEqualTo(429);
        assertThat(send(request("/by-header").header("X-Api-Key", "k2")).statusCode()).isEqualTo(200);
        HttpResponse<String> noKey = get("/by-header");
        assertThat(noKey.statusCode()).as("no key: limiter.empty-key=reject").isEqualTo(400);
        assertThat(noKey.headers().firstValue("Retry-After")).isEmpty();
        assertThat(noKey.body()).contains("\"type\":\"about:blank\"").doesNotContain("quota-exceeded")
                .contains("needs a key, but the key expression #apiKey gave none for this call");
    }

    @Test
    void principalKeysAreIndependent() throws Exception {
        assertThat(send(asUser("/me", "alice")).statusCode()).isEqualTo(200);
        assertThat(send(asUser("/me", "alice")).statusCode()).isEqualTo(200);
        assertThat(send(asUser("/me", "alice")).statusCode()).isEqualTo(429);
        assertThat(send(asUser("/me", "bob")).statusCode()).isEqualTo(200);
        HttpResponse<String> anonymous = get("/me");
        assertThat(anonymous.statusCode()).as("anonymous: no principal, no key").isEqualTo(400);
        assertThat(anonymous.headers().firstValue("Retry-After")).isEmpty();
        assertThat(anonymous.body()).contains("Rate limit 'me' needs a key, but the key expression"
                + " #principal?.name gave none");
    }

    @Test
    void aGetRuleCoversHead() throws Exception {
        this.time.advance(Duration.ofMinutes(1));
        int before = this.endpoints.ruledCalls();
        assertThat(send(request("/ruled/thing").method("HEAD", HttpRequest.BodyPublishers.noBody())).statusCode())
                .isEqualTo(200);
        assertThat(get("/ruled/thing").statusCode()).isEqualTo(200);
        assertThat(send(request("/ruled/thing").method("HEAD", HttpRequest.BodyPublishers.noBody())).statusCode())
                .isEqualTo(429);
        assertThat(this.endpoints.ruledCalls() - before).isEqualTo(2);
    }

    @Test
    void aUrlRuleRejectsBeforeTheHandlerRuns() throws Exception {
        int before = this.endpoints.ruledCalls();
        assertThat(get("/ruled/thing").statusCode()).isEqualTo(200);
        assertThat(get("/ruled/thing").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/ruled/thing");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"ruled\";q=2;w=60");
        assertThat(get("/ruled/thing").statusCode()).isEqualTo(429);
        assertThat(this.endpoints.ruledCalls() - before).isEqualTo(2);
        // Other methods are not ruled.
        assertThat(send(request("/ruled/thing").POST(HttpRequest.BodyPublishers.noBody())).statusCode())
                .isNotEqualTo(429);
    }

    @Test
    void aRuleAndAnAnnotationBothApplyAndBothShowInTheHeaders() throws Exception {
        HttpResponse<String> response = get("/annotated-and-ruled");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"ruled-too\";q=4;w=60, \"annotated\";q=5;w=60");
        assertThat(response.headers().firstValue("RateLimit")).hasValue("\"ruled-too\";r=3;t=60, \"annotated\";r=4;t=60");
    }

    @Test
    void aCatchAllExceptionHandlerDoesNotTurnARejectionIntoAnotherStatus() throws Exception {
        assertThat(get("/catch-all").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/catch-all");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.body()).doesNotContain("swallowed").contains("\"violated-policies\":[\"catch-all\"]");
        // The global catch-all advice does not see rejections either.
        get("/quote");
        HttpResponse<String> service = get("/quote");
        assertThat(service.statusCode()).isEqualTo(429);
        assertThat(service.body()).doesNotContain("advised");
    }

    @Test
    void aServiceLimitCalledFromAControllerBecomes429() throws Exception {
        this.time.advance(Duration.ofMinutes(1));
        assertThat(get("/quote").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/quote");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"quotes\";q=1;w=60");
    }

    @Test
    void repeatableLimitsConsumeFromNoneWhenOneRejects() throws Exception {
        assertThat(get("/both?client=a").statusCode()).isEqualTo(200);
        assertThat(get("/both?client=a").statusCode()).isEqualTo(200);
        assertThat(get("/both?client=b").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = get("/both?client=a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.body()).contains("\"violated-policies\":[\"all-clients\"]");
        // Client a's own limit kept its 3 remaining permits: the denied call took none.
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-client\";r=3;t=60, \"all-clients\";r=0;t=60");
    }

    @Test
    void aFalseConditionBypassesTheLimit() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(get("/orders?amount=10").statusCode()).isEqualTo(200);
        }
        assertThat(get("/orders?amount=500").statusCode()).isEqualTo(200);
        assertThat(get("/orders?amount=500").statusCode()).isEqualTo(429);
        assertThat(get("/orders?amount=10").statusCode()).isEqualTo(200);
    }

    @Test
    void aCostFromARequestParameterCountsAndABadOneIs400() throws Exception {
        assertThat(get("/pages?count=7").statusCode()).isEqualTo(200);
        assertThat(get("/pages?count=4").statusCode()).isEqualTo(429);
        assertThat(get("/pages?count=3").statusCode()).isEqualTo(200);
        HttpResponse<String> zero = get("/pages?count=0");
        assertThat(zero.statusCode()).isEqualTo(400);
        assertThat(zero.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(zero.body()).contains("The cost of limit 'pages' was 0; it must be between 1 and 10");
        assertThat(get("/pages?count=11").statusCode()).isEqualTo(400);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http().get(path);
    }

    private HttpRequest.Builder request(String path) {
        return http().request(path);
    }

    private HttpRequest.Builder asUser(String path, String user) {
        String credentials = Base64.getEncoder().encodeToString((user + ":pw").getBytes(StandardCharsets.UTF_8));
        return request(path).header("Authorization", "Basic " + credentials);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http().send(request);
    }

    private LocalHttp http() {
        return new LocalHttp(this.port);
    }

}
