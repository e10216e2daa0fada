package io.slidinglimiter.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.web.OpenSecurity;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoint, the metrics and the health over real HTTP, against running applications: two of
 * them share a redis-server the test starts, a third is local only.
 */
class RateLimitersEndpointIntegrationTests {

    private static RedisServer redis;

    private static ConfigurableApplicationContext first;

    private static ConfigurableApplicationContext second;

    private static ConfigurableApplicationContext localOnly;

    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        first = application(true);
        second = application(true);
        localOnly = application(false);
    }

    @AfterAll
    static void stop() {
        first.close();
        second.close();
        localOnly.close();
        redis.close();
    }

    private static ConfigurableApplicationContext application(boolean onRedis) {
        List<String> properties = new ArrayList<>(List.of("server.port=0",
                "management.endpoints.web.exposure.include=ratelimiters,metrics,health",
                "management.endpoint.health.show-details=always", "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + redis.port(), "limiter.redis.timeout=2s",
                "limiter.limits.greet.limit=5", "limiter.limits.greet.window=1m",
                "limiter.limits.api.limit=4", "limiter.limits.api.window=1m"));
        if (onRedis) {
            properties.add("limiter.backend=redis");
            properties.add("limiter.limits.api.on-failure=fail-closed");
        }
        return new SpringApplicationBuilder(OperationsApplication.class).properties(properties.toArray(String[]::new))
                .run();
    }

    @Test
    void decisionsMadeInRedisAreTimedAndObserved() throws Exception {
        assertThat(get(first, "/counted?user=dora").statusCode()).isEqualTo(200);
        assertThat(get(first, "/actuator/metrics/limiter.backend.duration?tag=backend:redis").body())
                .contains("\"statistic\":\"COUNT\"");
        assertThat(get(first, "/actuator/metrics/limiter.decision?tag=limit:counted&tag=backend:redis").body())
                .contains("\"statistic\":\"COUNT\"");
    }

    @Test
    void theTotalsAndTheMetricsEqualAKnownSequenceOfCalls() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            statuses.add(get(localOnly, "/counted?user=alice").statusCode());
        }
        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429);
        String limits = get(localOnly, "/actuator/ratelimiters").body();
        assertThat(limits).contains("\"counted\":{\"name\":\"counted\",\"limit\":5,\"configuredLimit\":5,\"window\":\"PT1M\",\"subWindows\":10,"
                + "\"algorithm\":\"sliding-window-counter\",\"backend\":\"local\",\"allowed\":5,\"rejected\":2,"
                + "\"fallback\":0}");
        assertThat(get(localOnly, "/actuator/metrics/limiter.requests?tag=limit:counted&tag=outcome:allowed").body())
                .contains("\"statistic\":\"COUNT\",\"value\":5.0");
        assertThat(get(localOnly, "/actuator/metrics/limiter.requests?tag=limit:counted&tag=outcome:rejected").body())
                .contains("\"statistic\":\"COUNT\",\"value\":2.0");
        assertThat(get(localOnly, "/actuator/metrics/limiter.backend.duration").statusCode())
                .as("local decisions are counted, not timed").isEqualTo(404);
        assertThat(get(localOnly, "/actuator/metrics/limiter.decision").statusCode())
                .as("local decisions are counted, not observed").isEqualTo(404);
        assertThat(get(localOnly, "/actuator/metrics/limiter.requests").body()).doesNotContain("alice");
        String key = get(localOnly, "/actuator/ratelimiters/counted?key=alice").body();
        assertThat(key).contains("\"key\":{").contains("\"used\":5").contains("\"remaining\":0");
    }

    @Test
    void aLowerLimitAppliesOnTheNextCallKeepsTheCountsAndReachesTheOtherInstance() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(get(first, "/api?user=bob").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> changed = post(first, "/actuator/ratelimiters/api", "{\"limit\": 3}");
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(changed.body()).contains("\"limit\":3").contains("\"appliesTo\":\"every instance\"");
        assertThat(get(first, "/api?user=bob").statusCode()).as("3 used of 3").isEqualTo(429);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!get(second, "/actuator/ratelimiters/api").body().contains("\"limit\":3")
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(get(second, "/actuator/ratelimiters/api").body()).contains("\"limit\":3");
        assertThat(get(second, "/api?user=bob").statusCode()).isEqualTo(429);
        assertThat(get(second, "/api?user=carol").statusCode()).isEqualTo(200);
    }

    @Test
    void deletingAKeyAdmitsItsNextCall() throws Exception {
        for (int i = 0; i < 5; i++) {
            get(localOnly, "/greet?user=dora");
        }
        assertThat(get(localOnly, "/greet?user=dora").statusCode()).isEqualTo(429);
        assertThat(delete(localOnly, "/actuator/ratelimiters/greet?key=dora").statusCode()).isEqualTo(204);
        assertThat(get(localOnly, "/greet?user=dora").statusCode()).isEqualTo(200);
    }

    @Test
    void badOperatorInputIsRefusedClearlyAndChangesNothing() throws Exception {
        assertThat(get(localOnly, "/actuator/ratelimiters/nope").statusCode()).isEqualTo(404);
        assertThat(post(localOnly, "/actuator/ratelimiters/nope", "{\"limit\": 3}").statusCode()).isEqualTo(404);
        HttpResponse<String> zero = post(localOnly, "/actuator/ratelimiters/greet", "{\"limit\": 0}");
        assertThat(zero.statusCode()).isEqualTo(400);
        assertThat(zero.body()).contains("limit must be greater than 0, but was 0");
        HttpResponse<String> text = post(localOnly, "/actuator/ratelimiters/greet", "{\"limit\": \"many\"}");
        assertThat(text.statusCode()).isEqualTo(400);
        assertThat(text.body()).contains("limit must be a whole number greater than 0, but was 'many'");
        HttpResponse<String> blank = delete(localOnly, "/actuator/ratelimiters/greet?key=%20");
        assertThat(blank.statusCode()).isEqualTo(400);
        assertThat(blank.body()).contains("Name the key to reset");
        assertThat(get(localOnly, "/actuator/ratelimiters/greet").body()).contains("\"limit\":5");
    }

    @Test
    void healthFollowsThePolicyWhileRedisIsDownAndIsUpAgainAfterARestart() throws Exception {
        assertThat(get(first, "/actuator/health/ratelimiter").body()).contains("\"status\":\"UP\"")
                .contains("\"redis\":\"UP\"");
        redis.stop();
        try {
            HttpResponse<String> down = get(first, "/actuator/health/ratelimiter");
            assertThat(down.statusCode()).as("a limit fails closed").isEqualTo(503);
            assertThat(down.body()).contains("\"status\":\"DOWN\"").contains("\"redis\":\"DOWN\"");
        }
        finally {
            redis.restart();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (get(first, "/actuator/health/ratelimiter").statusCode() != 200 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(get(first, "/actuator/health/ratelimiter").body()).contains("\"status\":\"UP\"");
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
        return send(app, HttpRequest.newBuilder(uri(app, path)));
    }

    private HttpResponse<String> post(ConfigurableApplicationContext app, String path, String json) throws Exception {
        return send(app, HttpRequest.newBuilder(uri(app, path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    private HttpResponse<String> delete(ConfigurableApplicationContext app, String path) throws Exception {
        return send(app, HttpRequest.newBuilder(uri(app, path)).DELETE());
    }

    private HttpResponse<String> send(ConfigurableApplicationContext app, HttpRequest.Builder request)
            throws Exception {
        return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(ConfigurableApplicationContext app, String path) {
        return URI.create("http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort() + path);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, OperationsApplication.Endpoints.class })
    static class OperationsApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/greet")
            @RateLimited(name = "greet", key = "#user")
            String greet(@RequestParam String user) {
                return "hello " + user;
            }

            @GetMapping("/counted")
            @RateLimited(name = "counted", limit = 5, window = "1m", key = "#user")
            String counted(@RequestParam String user) {
                return "counted " + user;
            }

            @GetMapping("/api")
            @RateLimited(name = "api", key = "#user")
            String api(@RequestParam String user) {
                return "api " + user;
            }

        }

    }

}
