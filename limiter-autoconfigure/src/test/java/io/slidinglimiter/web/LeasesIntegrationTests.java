package io.slidinglimiter.web;

import java.net.http.HttpResponse;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases over real HTTP (issue 19), on a redis-server the test starts: a busy endpoint with
 * {@code limiter.limits.<name>.lease} is decided mostly without a script call, its headers count
 * down exactly as without leases, its last permits are decided by Redis, and the endpoint and the
 * metrics show the leases. {@code limiter.redis.lease} sets the default.
 */
class LeasesIntegrationTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    @Test
    void aBusyEndpointIsDecidedFromLeasesWithExactHeaders() throws Exception {
        try (ConfigurableApplicationContext context = start("limiter.limits.hot.lease=true")) {
            LocalHttp http = LocalHttp.of(context);
            long scriptCalls = redis.server().scriptCalls();
            for (int i = 1; i <= 200; i++) {
                HttpResponse<String> response = http.get("/hot");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.headers().firstValue("RateLimit").orElseThrow()).as("call %d", i)
                        .startsWith("\"hot\";r=" + (250 - i) + ";");
            }
            assertThat(redis.server().scriptCalls() - scriptCalls).as("script calls for 200 requests")
                    .isLessThan(20);
            for (int i = 201; i <= 250; i++) {
                assertThat(http.get("/hot").statusCode()).as("call %d", i).isEqualTo(200);
            }
            HttpResponse<String> denied = http.get("/hot");
            assertThat(denied.statusCode()).isEqualTo(429);
            assertThat(denied.headers().firstValue("Retry-After")).isPresent();

            String limit = http.get("/actuator/ratelimiters/hot").body();
            assertThat(limit).contains("\"lease\":{\"fromLease\":").contains("\"lost\":0");
            String key = http.get("/actuator/ratelimiters/hot?key=all").body();
            assertThat(key).contains("\"used\":250").contains("\"lease\":{\"held\":false}");
            assertThat(http.get("/actuator/metrics/limiter.lease.decisions?tag=limit:hot&tag=source:lease").body())
                    .contains("\"COUNT\"");
            assertThat(http.get("/actuator/ratelimiters/plain").body()).doesNotContain("\"lease\"");
        }
    }

    @Test
    void limiterRedisLeaseIsTheDefaultAndALimitMaySayOtherwise() throws Exception {
        try (ConfigurableApplicationContext context = start("limiter.redis.lease=true",
                "limiter.limits.plain.lease=false")) {
            LocalHttp http = LocalHttp.of(context);
            for (int i = 0; i < 20; i++) {
                http.get("/hot");
                http.get("/plain");
            }
            assertThat(http.get("/actuator/ratelimiters/hot").body()).contains("\"lease\":{");
            assertThat(http.get("/actuator/ratelimiters/plain").body()).doesNotContain("\"lease\"");
            assertThat(http.get("/actuator/ratelimiters/hot?key=all").body()).contains("\"lease\":{\"held\":true");
        }
    }

    @Test
    void anInstanceThatStopsGivesBackWhatItsLeasesHold() throws Exception {
        try (ConfigurableApplicationContext context = start("limiter.limits.hot.lease=true")) {
            LocalHttp http = LocalHttp.of(context);
            for (int i = 0; i < 30; i++) {
                assertThat(http.get("/hot").statusCode()).isEqualTo(200);
            }
            assertThat(http.get("/actuator/ratelimiters/hot?key=all").body()).contains("\"lease\":{\"held\":true");
        }
        String counted = redis.server().call((commands) -> commands.hget("limiter:{all}:hot", "t"));
        assertThat(counted).as("Redis's count once the instance stopped").isEqualTo("30");
    }

    private static ConfigurableApplicationContext start(String... more) {
        redis.server().call((commands) -> commands.flushall());
        List<String> properties = new java.util.ArrayList<>(List.of(redis.limiterProperties()));
        // One sub-window of a day, on Redis's clock: a run that crossed the boundary of a one-minute
        // window (one run in fifty or so) saw its counts leave the window mid-test.
        properties.addAll(List.of("management.endpoints.web.exposure.include=ratelimiters,metrics",
                "limiter.limits.hot.limit=250", "limiter.limits.hot.window=1d", "limiter.limits.hot.sub-windows=1",
                "limiter.limits.plain.limit=250", "limiter.limits.plain.window=1d"));
        properties.addAll(List.of(more));
        return LocalHttp.start(LeasesApplication.class, properties);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, LeasesApplication.Endpoints.class })
    static class LeasesApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/hot")
            @RateLimited(name = "hot", key = "'all'")
            String hot() {
                return "hot";
            }

            @GetMapping("/plain")
            @RateLimited(name = "plain", key = "'all'")
            String plain() {
                return "plain";
            }

        }

    }

}
