package io.slidinglimiter.web.reactive;

import java.security.Principal;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WebFlux controller methods returning a plain value, with Reactor propagating its context to
 * thread locals ({@code spring.reactor.context-propagation=auto}): the same variables, the same
 * headers and the same 429, whatever the application's catch-all handler says.
 */
@SpringBootTest(classes = { ReactiveTestApplication.class, ReactivePlainValuedMethodsTests.PlainEndpoints.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "spring.reactor.context-propagation=auto" })
class ReactivePlainValuedMethodsTests {

    @LocalServerPort
    private int port;

    private WebTestClient client;

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

    /** Controller methods returning a plain value, registered for this class only. */
    @RestController
    static class PlainEndpoints {

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
