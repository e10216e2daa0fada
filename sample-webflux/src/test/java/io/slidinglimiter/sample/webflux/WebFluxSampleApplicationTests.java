package io.slidinglimiter.sample.webflux;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The sample as the README runs it, over real HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WebFluxSampleApplicationTests {

    @LocalServerPort
    private int port;

    private WebTestClient client;

    @BeforeEach
    void bind() {
        this.client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port)
                .responseTimeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void helloAdmitsTwoPerNameThen429WithHeaders() {
        this.client.get().uri("/hello/ann").exchange().expectStatus().isOk();
        this.client.get().uri("/hello/ann").exchange().expectStatus().isOk();
        this.client.get().uri("/hello/ann").exchange().expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectHeader().valueEquals("RateLimit-Policy", "\"hello\";q=2;w=60")
                .expectHeader().contentTypeCompatibleWith("application/problem+json");
        this.client.get().uri("/hello/bob").exchange().expectStatus().isOk();
    }

    @Test
    void theUrlRuleLimitsNewsAndAStreamIsLimitedOnSubscription() {
        for (int i = 0; i < 3; i++) {
            this.client.get().uri("/public/news").exchange().expectStatus().isOk();
        }
        this.client.get().uri("/public/news").exchange().expectStatus().isEqualTo(429);
        this.client.get().uri("/ticks").exchange().expectStatus().isOk().expectBody(String.class)
                .isEqualTo("tick 0\ntick 1\ntick 2\n");
        this.client.get().uri("/ticks").exchange().expectStatus().isEqualTo(429);
    }

    @Test
    void kotlinASuspendFunctionAndAFlowAreLimitedLikeTheirReactorTwins() {
        this.client.get().uri("/kotlin/hello/ann").exchange().expectStatus().isOk().expectBody(String.class)
                .isEqualTo("hello ann, from a coroutine\n");
        this.client.get().uri("/kotlin/hello/ann").exchange().expectStatus().isOk()
                .expectHeader().valueMatches("RateLimit", "\"kotlin-hello\";r=0;t=\\d+");
        this.client.get().uri("/kotlin/hello/ann").exchange().expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectHeader().contentTypeCompatibleWith("application/problem+json");
        this.client.get().uri("/kotlin/lines?count=3").exchange().expectStatus().isOk()
                .expectHeader().valueEquals("RateLimit-Policy", "\"kotlin-lines\";q=10;w=60")
                .expectBody(String.class).isEqualTo("line 1\nline 2\nline 3\n");
        // Charged 3 of 10: 7 left, enough for another collection at its cost of 5; then 4 more make 1 left.
        this.client.get().uri("/kotlin/lines?count=4").exchange().expectStatus().isOk();
        this.client.get().uri("/kotlin/lines").exchange().expectStatus().isEqualTo(429)
                .expectHeader().valueMatches("RateLimit", "\"kotlin-lines\";r=3;t=\\d+");
    }

}
