package io.slidinglimiter.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Mono;

import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every limited answer carries SPEC §5's headers on whichever thread the decision ran (Spring MVC,
 * over real HTTP): an {@code @Async} bean method returning a {@code CompletableFuture}, decided on
 * the executor's thread, answers its 200s and its 429 with {@code RateLimit-Policy} and
 * {@code RateLimit}, as a method decided on the request's thread does; so does a {@code Mono} bean
 * method that a controller's {@code Mono} calls after a hop to Reactor's timer thread. Only the
 * container's threads write them: a servlet response is not safe to share with the thread the
 * decision ran on.
 */
class ThreadHopHeadersHttpTests {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void anAsyncBeanMethodsDecisionsReachTheRequestsHeaders() throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(AsyncApplication.class)
                .properties("server.port=0").run()) {
            assertTwoAdmittedThenOneDeniedWithTheHeaders(app, "/report", "report", "async-reports");
            assertThat(app.getBean(Reports.class).threads()).as("decided on the executor's threads").isNotEmpty()
                    .allMatch((name) -> name.startsWith("task-"));
        }
    }

    @Test
    void aMonoBeanCalledAfterAHopAnswersWithTheHeaders() throws Exception {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(AsyncApplication.class)
                .properties("server.port=0").run()) {
            assertTwoAdmittedThenOneDeniedWithTheHeaders(app, "/later", "later", "later-reports");
            assertThat(app.getBean(Reports.class).threads()).as("called on Reactor's timer threads")
                    .anyMatch((name) -> name.startsWith("parallel-"));
        }
    }

    /** A limit of 2 a minute: both 200s and the 429 carry its fields. */
    private void assertTwoAdmittedThenOneDeniedWithTheHeaders(ConfigurableApplicationContext app, String path,
            String body, String limit) throws Exception {
        HttpResponse<String> first = get(app, path);
        // What a failure needs to be read: every header of the answer, and each run of the method.
        Supplier<String> seen = () -> "first answer's headers " + first.headers().map()
                + ", the method ran on " + app.getBean(Reports.class).threads();
        assertThat(first.statusCode()).as(seen).isEqualTo(200);
        assertThat(first.body()).isEqualTo(body);
        assertThat(first.headers().firstValue("RateLimit-Policy")).as(seen).hasValue("\"" + limit + "\";q=2;w=60");
        // Sub-windows are aligned to the clock: the count frees within the window, not always a whole one.
        assertThat(first.headers().firstValue("RateLimit").orElseThrow()).as(seen)
                .startsWith("\"" + limit + "\";r=1;t=");
        assertThat(get(app, path).headers().firstValue("RateLimit").orElseThrow())
                .startsWith("\"" + limit + "\";r=0;t=");
        HttpResponse<String> denied = get(app, path);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).isPresent();
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"" + limit + "\";q=2;w=60");
        assertThat(denied.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"" + limit + "\";r=0;t=");
        assertThat(denied.body()).contains("\"violated-policies\":[\"" + limit + "\"]");
        // Only the container's threads wrote the response: written from the executor's thread while the
        // container's thread wrote its own headers, Tomcat's headers were once corrupted (a
        // NullPointerException in Response.setHeader) and the client sent its request again, which
        // counted twice.
        assertThat(app.getBean(HeaderWrites.class).threads()).as("threads that wrote a RateLimit header")
                .isNotEmpty().allMatch((name) -> name.startsWith("http-nio-"), "a container's thread");
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
        return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:"
                + ((WebServerApplicationContext) app).getWebServer().getPort() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @EnableAsync
    @Import({ OpenSecurity.class, Reports.class, HeaderWrites.class, AsyncApplication.ReportController.class })
    static class AsyncApplication {

        /** Outside every other filter: sees each header written on the response, from any thread. */
        @Bean
        FilterRegistrationBean<Filter> headerWritesFilter(HeaderWrites writes) {
            FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(
                    (request, response, chain) -> chain.doFilter(request, writes.watch((HttpServletResponse) response)));
            registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
            registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
            return registration;
        }

        @RestController
        static class ReportController {

            private final Reports reports;

            ReportController(Reports reports) {
                this.reports = reports;
            }

            @GetMapping("/report")
            CompletableFuture<String> report() {
                return this.reports.build();
            }

            @GetMapping("/later")
            Mono<String> later() {
                return Mono.delay(Duration.ofMillis(5)).flatMap((tick) -> this.reports.later());
            }

        }

    }

    /** The threads that wrote a {@code RateLimit} or {@code RateLimit-Policy} header. */
    static class HeaderWrites {

        private final java.util.Queue<String> threads = new java.util.concurrent.ConcurrentLinkedQueue<>();

        java.util.List<String> threads() {
            return java.util.List.copyOf(this.threads);
        }

        HttpServletResponse watch(HttpServletResponse response) {
            return new HttpServletResponseWrapper(response) {

                @Override
                public void setHeader(String name, String value) {
                    if (name.startsWith("RateLimit")) {
                        HeaderWrites.this.threads.add(Thread.currentThread().getName());
                    }
                    super.setHeader(name, value);
                }

            };
        }

    }

    @Service
    static class Reports {

        private final java.util.Queue<String> threads = new java.util.concurrent.ConcurrentLinkedQueue<>();

        public java.util.List<String> threads() {
            return java.util.List.copyOf(this.threads);
        }

        @Async
        @RateLimited(name = "async-reports", limit = 2, window = "1m")
        public CompletableFuture<String> build() {
            this.threads.add(Thread.currentThread().getName());
            return CompletableFuture.completedFuture("report");
        }

        @RateLimited(name = "later-reports", limit = 2, window = "1m")
        public Mono<String> later() {
            this.threads.add(Thread.currentThread().getName());
            return Mono.just("later");
        }

    }

}
