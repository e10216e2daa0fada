package io.slidinglimiter.web;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holding under overload: a running application on the defaults ({@code limiter.redis.timeout}
 * 100 ms, fail-open, Tomcat's platform threads), more concurrent callers than cores, a healthy
 * redis-server of its own. A busy application is not a down Redis: its decisions stay in Redis.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisOverloadHttpTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    /** Callers at once: far more than this machine's cores, as wrk's -c200 in the trial. */
    private static final int CALLERS = 200;

    private static final int CALLS_EACH = 60;

    /**
     * Counted, not timed: the decisions asked (answered requests), the permits Redis counted for them
     * (however many decisions each script call carried), the decisions the limiter's metrics say
     * fell back, and the batches they say carried decisions.
     */
    @Test
    void anOverloadedApplicationKeepsItsDecisionsInRedis() throws Exception {
        try (ConfigurableApplicationContext context = LocalHttp.start(OverloadApplication.class,
                List.of(redis.limiterProperties()))) {
            LocalHttp http = LocalHttp.of(context);
            assertThat(http.get("/work?user=warm").statusCode()).isEqualTo(200);
            long countedBefore = redis.server().countedPermits("limiter:*:work");
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            double fallbacksBefore = fallbacks(meters);
            Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
            ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
            try {
                List<Future<?>> done = new java.util.ArrayList<>();
                for (int c = 0; c < CALLERS; c++) {
                    done.add(callers.submit(() -> {
                        for (int i = 0; i < CALLS_EACH; i++) {
                            String user = "u" + ThreadLocalRandom.current().nextInt(1, 100_001);
                            HttpResponse<String> response = http.get("/work?user=" + user);
                            statuses.merge(response.statusCode(), 1, Integer::sum);
                        }
                        return null;
                    }));
                }
                for (Future<?> each : done) {
                    each.get(5, TimeUnit.MINUTES);
                }
            }
            finally {
                callers.shutdownNow();
            }
            long decisions = (long) CALLERS * CALLS_EACH;
            long inRedis = redis.server().countedPermits("limiter:*:work") - countedBefore;
            double fellBack = fallbacks(meters) - fallbacksBefore;
            assertThat(statuses).containsOnlyKeys(200);
            assertThat(inRedis).as("%d of %d decisions counted in Redis; %s fell back", inRedis, decisions,
                    fellBack).isGreaterThanOrEqualTo(decisions * 999 / 1000);
            assertThat(fellBack).as("limiter.requests{outcome=fallback}").isLessThanOrEqualTo(decisions / 1000.0);
            // Far more callers than calls in flight: decisions went in batches, and the meters say so.
            LettuceScriptRunner runner = context.getBean(LettuceScriptRunner.class);
            double batches = meters.get("limiter.redis.batches").functionCounter().count();
            double batched = meters.get("limiter.redis.batched.decisions").functionCounter().count();
            assertThat(batches).as("limiter.redis.batches").isPositive().isEqualTo(runner.batchesSent());
            assertThat(batched).as("limiter.redis.batched.decisions").isGreaterThanOrEqualTo(2 * batches)
                    .isEqualTo(runner.batchedDecisions());
        }
    }

    /** With Redis up, the limiter and its client say nothing above INFO from start to stop. */
    @Test
    void withRedisUpTheStartAndTheStopLogNoWarning(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = LocalHttp.start(OverloadApplication.class,
                List.of(redis.limiterProperties()))) {
            LocalHttp http = LocalHttp.of(context);
            for (int i = 0; i < 5; i++) {
                assertThat(http.get("/work?user=alice").statusCode()).isEqualTo(200);
            }
        }
        assertThat(output.getAll()).contains("Started");
        assertThat(output.getAll().lines()
                .filter((line) -> line.contains("WARN") || line.contains("ERROR") || line.startsWith("WARNING")
                        || line.startsWith("SEVERE"))
                .filter((line) -> line.contains("slidinglimiter") || line.contains("lettuce")
                        || line.contains("limiter")))
                .isEmpty();
    }

    private static double fallbacks(MeterRegistry meters) {
        return meters.find("limiter.requests").tag("limit", "work").tag("outcome", "fallback").counters().stream()
                .mapToDouble((counter) -> counter.count()).sum();
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, WorkController.class })
    static class OverloadApplication {

    }

    @RestController
    static class WorkController {

        /** A limit no key reaches: every decision admits, as in the trial. */
        @GetMapping("/work")
        @RateLimited(name = "work", key = "#user", limit = 1_000_000_000, window = "1m")
        String work(@RequestParam String user) {
            return "ok";
        }

    }

}
