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

}
