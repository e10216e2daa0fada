package io.slidinglimiter.web;

import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live changes as a user makes them (issue 18, item 3): edit the configuration file, then
 * {@code POST /actuator/refresh} (Spring Cloud Context's endpoint, which re-reads it and publishes
 * the {@code EnvironmentChangeEvent}), locally and on Redis. A new limit keeps the counts, a new
 * window starts fresh counters, an invalid value keeps the old ones and names the property, and a
 * plan's new quota applies at once.
 */
@ExtendWith(OutputCaptureExtension.class)
class LiveChangesHttpTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    @TempDir
    Path config;

    @Test
    void onTheLocalBackend(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            changesApplyOnRefresh(LocalHttp.of(context), output);
        }
    }

    /**
     * Seconds for Redis: a test of what live changes do to Redis's counts, not of Redis failing. With
     * the default 100 ms, a call a busy host kept waiting follows fail-open, and what it admitted is
     * (rightly) counted in Redis, one permit beyond what the test counts on.
     */
    @Test
    void onRedis(CapturedOutput output) throws Exception {
        List<String> properties = new ArrayList<>(List.of(redis.limiterProperties()));
        properties.add("limiter.redis.timeout=5s");
        try (ConfigurableApplicationContext context = start(properties.toArray(String[]::new))) {
            changesApplyOnRefresh(LocalHttp.of(context), output);
        }
    }

    private void changesApplyOnRefresh(LocalHttp http, CapturedOutput output) throws Exception {
        assertThat(statuses(http, 2)).containsExactly(200, 200);

        configure("limit: 5", "window: 1m");
        assertThat(refresh(http)).contains("limiter.limits.live.limit");
        assertThat(statuses(http, 4)).as("2 of 5 were used: counts kept").containsExactly(200, 200, 200, 429);

        configure("limit: 5", "window: 2m", "sub-windows: 12");
        refresh(http);
        assertThat(statuses(http, 6)).as("another window: fresh counters").containsExactly(200, 200, 200, 200, 200,
                429);
        assertThat(http.get("/live").headers().firstValue("RateLimit-Policy")).hasValue("\"live\";q=5;w=120");

        configure("limit: 0", "window: 2m", "sub-windows: 12");
        refresh(http);
        assertThat(output.getOut()).contains("The new value of limiter.limits.live.limit Limit 'live': limit must be"
                + " greater than 0 but was 0: limit 'live' keeps its values.");
        assertThat(http.get("/actuator/ratelimiters/live").body()).contains("\"limit\":5")
                .contains("\"window\":\"PT2M\"");
        assertThat(statuses(http, 1)).containsExactly(429);

        configure("limit: 5", "window: 2m", "sub-windows: 12", "plans.pro.limit: 8");
        refresh(http);
        assertThat(statuses(http, "pro", 4)).as("5 of 8 used on pro").containsExactly(200, 200, 200, 429);
    }

    /** Writes limiter.limits.live in the application's configuration file, as an operator would. */
    private void configure(String... lines) throws Exception {
        List<String> yaml = new ArrayList<>(List.of("limiter:", "  limits:", "    live:"));
        for (String line : lines) {
            if (line.startsWith("plans.")) {
                yaml.add("      plans:");
                // plans.pro.limit: 8 -> pro: { limit: 8 }
                String plan = line.substring("plans.".length(), line.indexOf(".limit:"));
                yaml.add("        " + plan + ": { limit:" + line.substring(line.indexOf(".limit:") + ".limit:".length())
                        + " }");
            }
            else {
                yaml.add("      " + line);
            }
        }
        Files.write(this.config.resolve("application.yml"), yaml);
    }

    private static String refresh(LocalHttp http) throws Exception {
        return http.send(http.request("/actuator/refresh").POST(HttpRequest.BodyPublishers.noBody())
                .header("Content-Type", "application/json")).body();
    }

    private static List<Integer> statuses(LocalHttp http, int calls) throws Exception {
        return statuses(http, null, calls);
    }

    private static List<Integer> statuses(LocalHttp http, String plan, int calls) throws Exception {
        return http.statuses(calls, () -> (plan != null) ? http.request("/live").header("X-Plan", plan)
                : http.request("/live"));
    }

    private ConfigurableApplicationContext start(String... more) throws Exception {
        configure("limit: 3", "window: 1m");
        return LocalHttp.start(LiveApplication.class, List.of(
                "management.endpoints.web.exposure.include=ratelimiters,refresh",
                "spring.config.additional-location=file:" + this.config + "/",
                "limiter.limits.live.plan=#request.getHeader('X-Plan')"), more);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, LiveApplication.Endpoints.class })
    static class LiveApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/live")
            @RateLimited(name = "live", key = "#clientAddress")
            String live() {
                return "live";
            }

        }

    }

}
