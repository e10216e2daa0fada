package io.slidinglimiter.web.reactive;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every limited answer carries SPEC §5's headers on WebFlux on whichever thread the decision ran,
 * over real HTTP: a {@code Mono} bean method that a controller's {@code Mono} calls after a hop to
 * Reactor's timer thread (the request travels in the subscriber's context), and an {@code @Async}
 * bean method returning a {@code CompletableFuture} (the request noted on the call before the hop,
 * where Reactor propagates its context to thread locals: {@code spring.reactor.context-propagation=auto}).
 */
@SpringBootTest(classes = { ReactiveTestApplication.class, ReactiveThreadHopHeadersHttpTests.HopEndpoints.class,
        ReactiveThreadHopHeadersHttpTests.HopReports.class },
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "spring.main.web-application-type=reactive", "spring.reactor.context-propagation=auto" })
class ReactiveThreadHopHeadersHttpTests {

    @LocalServerPort
    private int port;

    private WebTestClient client;

    @BeforeEach
    void bindToTheRunningServer() {
        this.client = ReactiveHttp.client(this.port);
    }

    @Test
    void aMonoBeanCalledAfterAHopAnswersWithTheHeaders() {
        assertTwoAdmittedThenOneDeniedWithTheHeaders("/hop-later", "later", "hop-later");
    }

    @Test
    void anAsyncBeanMethodsDecisionsReachTheRequestsHeaders() {
        assertTwoAdmittedThenOneDeniedWithTheHeaders("/hop-report", "report", "hop-report");
        assertThat(HopReports.threads).as("run on the executor's threads").isNotEmpty()
                .allMatch((name) -> name.startsWith("task-"));
    }

    /** A limit of 2 a minute on the test's fixed clock: both 200s and the 429 carry its fields. */
    private void assertTwoAdmittedThenOneDeniedWithTheHeaders(String path, String body, String limit) {
        for (int remaining = 1; remaining >= 0; remaining--) {
            this.client.get().uri(path).exchange().expectStatus().isOk()
                    .expectHeader().valueEquals("RateLimit-Policy", "\"" + limit + "\";q=2;w=60")
                    .expectHeader().valueEquals("RateLimit", "\"" + limit + "\";r=" + remaining + ";t=60")
                    .expectBody(String.class).isEqualTo(body);
        }
        this.client.get().uri(path).exchange().expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("Retry-After", "60")
                .expectHeader().valueEquals("RateLimit-Policy", "\"" + limit + "\";q=2;w=60")
                .expectHeader().valueEquals("RateLimit", "\"" + limit + "\";r=0;t=60")
                .expectBody(String.class).value((text) -> assertThat(text).contains("\"violated-policies\":[\""
                        + limit + "\"]"));
    }

    /** Controllers that reach a limited bean on another thread. */
    @RestController
    static class HopEndpoints {

        private final HopReports reports;

        HopEndpoints(HopReports reports) {
            this.reports = reports;
        }

        @GetMapping("/hop-later")
        Mono<String> later() {
            return Mono.delay(Duration.ofMillis(5)).flatMap((tick) -> this.reports.later());
        }

        @GetMapping("/hop-report")
        CompletableFuture<String> report() {
            return this.reports.build();
        }

    }

    /** Limited methods decided off the request's thread. */
    @EnableAsync
    static class HopReports {

        static final java.util.Queue<String> threads = new java.util.concurrent.ConcurrentLinkedQueue<>();

        @RateLimited(name = "hop-later", limit = 2, window = "1m")
        public Mono<String> later() {
            return Mono.just("later");
        }

        @Async
        @RateLimited(name = "hop-report", limit = 2, window = "1m")
        public CompletableFuture<String> build() {
            threads.add(Thread.currentThread().getName());
            return CompletableFuture.completedFuture("report");
        }

    }

}
