package io.slidinglimiter.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Operations on limits that live in Redis, over real HTTP, with applications started and stopped
 * as a rolling deploy would: run-time changes, their end, an outage, and health.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisOperationsIntegrationTests {

    /** A log line of one of the limiter's loggers, its name written out or abbreviated. */
    private static final Pattern LIMITER_LOGGER = Pattern.compile(" (io\\.slidinglimiter|i\\.s)\\.");

    private final HttpClient http = HttpClient.newHttpClient();

    private final List<ConfigurableApplicationContext> applications = new ArrayList<>();

    private RedisServer redis;

    @BeforeEach
    void startRedis() {
        this.redis = RedisServer.start();
    }

    @AfterEach
    void stopEverything() {
        this.applications.forEach(ConfigurableApplicationContext::close);
        this.redis.close();
    }

    /**
     * SPEC §7: a change is shared and survives restarts with the same configuration; a changed
     * configured value wins; DELETE without a key reverts it on every instance.
     */
    @Test
    void aRunTimeChangeLastsUntilItIsRevertedOrTheConfigurationChanges() throws Exception {
        ConfigurableApplicationContext first = application(9);
        ConfigurableApplicationContext second = application(9);
        HttpResponse<String> changed = post(first, "/actuator/ratelimiters/api", "{\"limit\": 7}");
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(changed.body()).contains("\"limit\":7,\"configuredLimit\":9");
        awaitLimit(second, 7);

        first.close();
        ConfigurableApplicationContext restarted = application(9);
        awaitLimit(restarted, 7);

        HttpResponse<String> reverted = delete(restarted, "/actuator/ratelimiters/api");
        assertThat(reverted.statusCode()).isEqualTo(200);
        assertThat(reverted.body()).contains("\"limit\":9").contains("\"appliesTo\":\"every instance\"");
        awaitLimit(second, 9);
        assertThat(this.redis.<Long>call((commands) -> commands.hlen("limiter:limits"))).isZero();

        post(second, "/actuator/ratelimiters/api", "{\"limit\": 3}");
        awaitLimit(restarted, 3);
        ConfigurableApplicationContext reconfigured = application(12);
        awaitLimit(reconfigured, 12);
        assertThat(get(reconfigured, "/actuator/ratelimiters/api").body()).contains("\"configuredLimit\":12");
        // The new configuration removed the change, so instances still on the old one go back to theirs.
        awaitLimit(second, 9);
        awaitLimit(restarted, 9);
        assertThat(this.redis.<Long>call((commands) -> commands.hlen("limiter:limits"))).isZero();
    }

    /**
     * A limit Redis cannot count exactly is refused at the door (400 naming the bound), as is a field
     * that cannot change at run time; nothing is stored. A value planted in Redis is ignored with one
     * ERROR, and the limit keeps its configured value on every instance, after a restart too.
     */
    @Test
    void aValueTheBackendCannotHoldIsRefusedAndAStoredOneIsIgnored(CapturedOutput output) throws Exception {
        ConfigurableApplicationContext app = application(9);
        HttpResponse<String> huge = post(app, "/actuator/ratelimiters/api", "{\"limit\": 9223372036854775807}");
        assertThat(huge.statusCode()).isEqualTo(400);
        assertThat(huge.body()).contains("9007199254740991").contains("limiter.limits.api.backend")
                .contains("Nothing was changed");
        HttpResponse<String> window = post(app, "/actuator/ratelimiters/api",
                "{\"limit\": 3, \"window\": \"0s\", \"subWindows\": -1}");
        assertThat(window.statusCode()).isEqualTo(400);
        assertThat(window.body()).contains("[window, subWindows]").contains("limiter.limits.api");
        assertThat(this.redis.<Long>call((commands) -> commands.hlen("limiter:limits"))).as("nothing stored").isZero();
        assertThat(get(app, "/actuator/ratelimiters/api").body()).contains("\"limit\":9,");

        this.redis.call((commands) -> commands.hset("limiter:limits", "api", "9223372036854775807:9"));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> output.getOut().contains("has a run-time change stored in Redis that cannot apply"));
        ConfigurableApplicationContext restarted = application(9);
        Thread.sleep(2_500); // both instances read the stored changes twice at least (once a second)
        for (ConfigurableApplicationContext each : List.of(app, restarted)) {
            assertThat(get(each, "/actuator/ratelimiters/api").body()).contains("\"limit\":9,");
            assertThat(get(each, "/api?user=stored").statusCode()).isEqualTo(200);
            assertThat(get(each, "/actuator/health/ratelimiter").body()).contains("\"status\":\"UP\"");
        }
        // The limiter's own ERROR lines: a library's (Netty's leak detector reports a buffer whenever a
        // GC finds one, from any test's connection) says nothing of how often the limiter logs.
        assertThat(Arrays.stream(output.getOut().split("\n"))
                .filter((line) -> line.contains(" ERROR ") && LIMITER_LOGGER.matcher(line).find())).as(
                        "one ERROR per instance, not one per read")
                .hasSize(2);
    }

    /**
     * A failure of one limit's own value (here a limit set past what Redis counts, programmatically)
     * is that limit's alone: its calls follow its own policy, every other limit goes on deciding in
     * Redis exactly, the breaker stays closed and health UP; one ERROR names the limit.
     */
    @Test
    void aLimitsOwnFailureLeavesOtherLimitsInRedisAndHealthUp(CapturedOutput output) throws Exception {
        ConfigurableApplicationContext app = application(9);
        app.getBean(LimitRegistry.class).updateLimit("api", Long.MAX_VALUE);
        for (int i = 0; i < 30; i++) {
            assertThat(get(app, "/api?user=u" + i).statusCode()).as("api fails closed alone").isEqualTo(429);
        }
        int greeted = 0;
        for (int i = 0; i < 8; i++) {
            greeted += (get(app, "/greet?user=alice").statusCode() == 200) ? 1 : 0;
        }
        assertThat(greeted).as("greet, decided in Redis: exactly its limit").isEqualTo(5);
        assertThat(this.redis.<Boolean>call((commands) -> commands.exists("limiter:{alice}:greet") == 1)).isTrue();
        HttpResponse<String> health = get(app, "/actuator/health/ratelimiter");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");
        assertThat(output.getOut()).contains("decision of limit 'api' failed in Redis for that limit's own values")
                .doesNotContain("Redis is failing the rate limiter");
        assertThat(output.getOut().split("limit 'api' failed in Redis").length - 1).isEqualTo(1);
    }

    /** While Redis is down: 503 with a sentence within the timeout, and a key's view says it is local. */
    @Test
    void operationsDuringAnOutageAnswerPromptlyAndSayWhatTheyShow() throws Exception {
        ConfigurableApplicationContext app = application(9);
        assertThat(get(app, "/actuator/ratelimiters/api?key=alice").body()).doesNotContain("\"source\"");
        this.redis.stop();
        for (int i = 0; i < 5; i++) {
            get(app, "/api?user=alice");
        }
        long start = System.nanoTime();
        HttpResponse<String> change = post(app, "/actuator/ratelimiters/api", "{\"limit\": 7}");
        HttpResponse<String> reset = delete(app, "/actuator/ratelimiters/api?key=alice");
        HttpResponse<String> revert = delete(app, "/actuator/ratelimiters/api");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        for (HttpResponse<String> response : List.of(change, reset, revert)) {
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(response.body()).contains("Redis").contains("did not answer").doesNotContain("Exception")
                    .doesNotContain("\tat ");
        }
        assertThat(took).as("three operations with a 200 ms timeout").isLessThan(Duration.ofSeconds(5));
        assertThat(get(app, "/actuator/ratelimiters/api?key=alice").body())
                .contains("\"source\":\"local: Redis is not answering");
        assertThat(get(app, "/actuator/ratelimiters/api").body()).contains("\"limit\":9");
    }

    /** Under maxmemory every admission fails in Redis: health is DOWN, with each limit's own policy. */
    @Test
    void healthIsDownWhileDecisionsFailAndShowsEachLimitsPolicy() throws Exception {
        ConfigurableApplicationContext app = application(9);
        assertThat(get(app, "/actuator/health/ratelimiter").body()).contains("\"status\":\"UP\"")
                .contains("\"api\":\"fail-closed\"").contains("\"open\":\"fail-open\"");
        this.redis.call((commands) -> commands.configSet("maxmemory-policy", "noeviction"));
        this.redis.call((commands) -> commands.configSet("maxmemory", "1"));
        for (int i = 0; i < 3; i++) {
            assertThat(get(app, "/api?user=u" + i).statusCode()).as("fail-closed").isEqualTo(429);
        }
        HttpResponse<String> down = get(app, "/actuator/health/ratelimiter");
        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(down.body()).contains("\"status\":\"DOWN\"").contains("OOM");
        this.redis.call((commands) -> commands.configSet("maxmemory", "0"));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            get(app, "/api?user=after");
            return get(app, "/actuator/health/ratelimiter").statusCode() == 200;
        });
    }

    private ConfigurableApplicationContext application(long configuredLimit) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(
                RateLimitersEndpointIntegrationTests.OperationsApplication.class).properties("server.port=0",
                        "management.endpoints.web.exposure.include=ratelimiters,health",
                        "management.endpoint.health.show-details=always", "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + this.redis.port(), "limiter.redis.timeout=200ms",
                        "limiter.backend=redis", "limiter.limits.api.limit=" + configuredLimit,
                        "limiter.limits.api.window=1m", "limiter.limits.api.on-failure=fail-closed",
                        "limiter.limits.open.limit=5", "limiter.limits.open.window=1m",
                        "limiter.limits.greet.limit=5", "limiter.limits.greet.window=1m")
                .run();
        this.applications.add(app);
        return app;
    }

    private void awaitLimit(ConfigurableApplicationContext app, long limit) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .until(() -> get(app, "/actuator/ratelimiters/api").body().contains("\"limit\":" + limit + ","));
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(app, path)));
    }

    private HttpResponse<String> post(ConfigurableApplicationContext app, String path, String json) throws Exception {
        return send(HttpRequest.newBuilder(uri(app, path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    private HttpResponse<String> delete(ConfigurableApplicationContext app, String path) throws Exception {
        return send(HttpRequest.newBuilder(uri(app, path)).DELETE());
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return this.http.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(ConfigurableApplicationContext app, String path) {
        return URI.create("http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort() + path);
    }

}
