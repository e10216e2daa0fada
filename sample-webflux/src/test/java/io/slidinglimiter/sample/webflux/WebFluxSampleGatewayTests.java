package io.slidinglimiter.sample.webflux;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's gateway profile as the README runs it: a route to the application's own endpoints,
 * 3 × 200 then 429 with {@code Retry-After} and the problem body.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("gateway")
class WebFluxSampleGatewayTests {

    @LocalServerPort
    private int port;

    @Test
    void threeRequestsThroughTheRouteThenA429() {
        WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port)
                .responseTimeout(Duration.ofSeconds(10)).build();
        for (int i = 0; i < 3; i++) {
            client.get().uri("/via-gateway/greeting").exchange().expectStatus().isOk()
                    .expectHeader().valueEquals("RateLimit-Policy", "\"hello-route\";q=3;w=10");
        }
        client.get().uri("/via-gateway/greeting").exchange().expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectHeader().contentTypeCompatibleWith("application/problem+json")
                .expectBody(String.class).value((body) -> assertThat(body)
                        .contains("\"violated-policies\":[\"hello-route\"]"));
    }

}
