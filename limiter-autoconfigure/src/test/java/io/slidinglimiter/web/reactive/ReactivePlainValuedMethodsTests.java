package io.slidinglimiter.web.reactive;

import java.security.Principal;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WebFlux controller methods returning a plain value or a {@code CompletableFuture}, with Reactor
 * propagating its context to thread locals ({@code spring.reactor.context-propagation=auto}): the
 * same variables, the same headers and the same 429, whatever the application's catch-all handler
 * says.
 */
@SpringBootTest(classes = { ReactiveTestApplication.class, ReactivePlainValuedMethodsTests.PlainEndpoints.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "spring.reactor.context-propagation=auto" })
class ReactivePlainValuedMethodsTests {

    @LocalServerPort
    private int port;

    private WebTestClient client;

    @Autowired
    private RateLimiters rateLimiters;

    @BeforeEach
    void bindToTheRunningServer() {
        this.client = ReactiveHttp.client(this.port);
    }

    @Test
    void aPlainValueIsLimitedWithTheRequestsVariablesTheHeadersAndThe429() {
        this.client.get().uri("/plain").headers((headers) -> headers.setBasicAuth("alice", "pw")).exchange()
                .expectStatus().isOk().expectHeader().valueEquals("RateLimit", "\"plain\";r=0;t=60")
                .expectBody(String.class).isEqualTo("plain alice");
        this.client.get().uri("/plain").headers((headers) -> headers.setBasicAuth("bob", "pw")).exchange()
                .expectStatus().isOk();
        this.client.get().uri("/plain").headers((headers) -> headers.setBasicAuth("alice", "pw")).exchange()
                .expectStatus().isEqualTo(429).expectHeader().valueEquals("Retry-After", "60")
                .expectHeader().valueEquals("RateLimit-Policy", "\"plain\";q=1;w=60")
                .expectHeader().contentTypeCompatibleWith("application/problem+json")
                .expectBody(String.class).value((body) -> assertThat(body).contains("\"status\":429")
                        .doesNotContain("caught by the application"));
    }

    /** A body is read asynchronously, on another signal than the request's first: the request is still seen. */
    @Test
    void aMethodThatReadsABodySeesItsRequestToo() {
        for (int status : new int[] { 200, 429 }) {
            this.client.post().uri("/plain-body").bodyValue("same").exchange().expectStatus().isEqualTo(status);
        }
        this.client.post().uri("/plain-body").bodyValue("other").exchange().expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit", "\"plain-body\";r=0;t=60");
    }

    @Test
    void aMissingKeyIs400() {
        this.client.get().uri("/plain").exchange().expectStatus().isBadRequest().expectHeader()
                .doesNotExist("Retry-After");
    }

    @Test
    void theMethodsOwnFailureStaysTheApplications() {
        this.client.get().uri("/plain-failing").exchange().expectStatus().isEqualTo(500).expectBody(String.class)
                .isEqualTo("caught by the application");
    }

    /**
     * A CompletableFuture is decided before the method runs, on the calling thread, as a plain value
     * is: the request's variables, the headers, the 429 with its body, a denied call never run.
     */
    @Test
    void aFutureIsLimitedLikeAPlainValue() {
        int before = PlainEndpoints.futureCalls.get();
        for (int i = 0; i < 2; i++) {
            this.client.get().uri("/plain-future").headers((headers) -> headers.setBasicAuth("alice", "pw"))
                    .exchange().expectStatus().isOk()
                    .expectHeader().valueEquals("RateLimit-Policy", "\"plain-future\";q=2;w=60")
                    .expectHeader().valueEquals("RateLimit", "\"plain-future\";r=" + (1 - i) + ";t=60")
                    .expectBody(String.class).isEqualTo("later alice");
        }
        this.client.get().uri("/plain-future").headers((headers) -> headers.setBasicAuth("alice", "pw")).exchange()
                .expectStatus().isEqualTo(429).expectHeader().valueEquals("Retry-After", "60")
                .expectHeader().valueEquals("RateLimit", "\"plain-future\";r=0;t=60")
                .expectBody(String.class).value((body) -> assertThat(body).contains("\"status\":429"));
        this.client.get().uri("/plain-future").headers((headers) -> headers.setBasicAuth("bob", "pw")).exchange()
                .expectStatus().isOk();
        assertThat(PlainEndpoints.futureCalls.get() - before).as("the denied call did not run").isEqualTo(3);
    }

    @Test
    void aFutureIsChargedWhatItCompletedWith() {
        this.client.get().uri("/plain-future-rows?count=3").exchange().expectStatus().isOk()
                .expectBody(String.class).isEqualTo("[1,2,3]");
        assertThat(this.rateLimiters.usage("plain-future-rows", "*").used()).isEqualTo(3);
    }

    /** Controller methods returning a plain value, registered for this class only. */
    @RestController
    static class PlainEndpoints {

        static final AtomicInteger futureCalls = new AtomicInteger();

        @GetMapping("/plain-future")
        @RateLimited(name = "plain-future", limit = 2, window = "1m",
                key = "#principal?.name + ':' + #request.path.value()")
        public CompletableFuture<String> future(Principal principal) {
            futureCalls.incrementAndGet();
            return CompletableFuture.supplyAsync(() -> "later " + principal.getName());
        }

        @GetMapping("/plain-future-rows")
        @RateLimited(name = "plain-future-rows", limit = 10, window = "1m", cost = "5", charge = "#result.size()")
        public CompletableFuture<List<Integer>> rows(@RequestParam int count) {
            return CompletableFuture.supplyAsync(() -> IntStream.rangeClosed(1, count).boxed().toList());
        }

        @GetMapping("/plain")
        @RateLimited(name = "plain", limit = 1, window = "1m", key = "#principal?.name",
                condition = "#request.path.value() == '/plain'")
        public String plain(Principal principal) {
            return "plain " + principal.getName();
        }

        @PostMapping("/plain-body")
        @RateLimited(name = "plain-body", limit = 1, window = "1m", key = "#body",
                condition = "#request.method.name() == 'POST'")
        public String body(@RequestBody String body) {
            return body;
        }

        @GetMapping("/plain-failing")
        @RateLimited(name = "plain-failing", limit = 5, window = "1m", key = "#clientAddress")
        public String failing() {
            throw new IllegalStateException("the application's own failure");
        }

    }

}
