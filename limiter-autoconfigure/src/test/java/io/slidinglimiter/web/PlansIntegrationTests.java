package io.slidinglimiter.web;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;

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

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.testsupport.RedisExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-plan quotas over real HTTP (issue 18, item 1), locally and on Redis: the plan expression of
 * {@code limiter.limits.<name>.plan} or of the annotation chooses the quota; the counter is the
 * limit's own, so a caller who changes plan mid-window keeps its count; the headers show the quota
 * that applied; an unknown plan gets the limit's own quota, logged once; the endpoint lists plans.
 */
@ExtendWith(OutputCaptureExtension.class)
class PlansIntegrationTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    @Test
    void onTheLocalBackend(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            eachCallIsComparedWithItsPlansQuota(LocalHttp.of(context), context.getBean(RateLimiters.class), output);
        }
    }

    @Test
    void onRedis(CapturedOutput output) throws Exception {
        try (ConfigurableApplicationContext context = start(redis.limiterProperties())) {
            eachCallIsComparedWithItsPlansQuota(LocalHttp.of(context), context.getBean(RateLimiters.class), output);
        }
    }

    private static void eachCallIsComparedWithItsPlansQuota(LocalHttp http, RateLimiters rateLimiters,
            CapturedOutput output) throws Exception {
        // The annotation, with the plan from limiter.limits.api.plan: 2 a minute, 4 on pro.
        assertThat(statuses(http, "/quota", "alice", null, 3)).containsExactly(200, 200, 429);
        HttpResponse<String> upgraded = call(http, "/quota", "alice", "pro");
        assertThat(upgraded.statusCode()).as("upgraded mid-window: 2 of 4 used").isEqualTo(200);
        assertThat(upgraded.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=4;w=60");
        assertThat(upgraded.headers().firstValue("RateLimit")).get().asString().startsWith("\"api\";r=1;");
        assertThat(statuses(http, "/quota", "alice", "pro", 2)).containsExactly(200, 429);
        HttpResponse<String> downgraded = call(http, "/quota", "alice", null);
        assertThat(downgraded.statusCode()).as("back on the limit's own quota: 4 of 2 used").isEqualTo(429);
        assertThat(downgraded.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=2;w=60");
        HttpResponse<String> unknown = call(http, "/quota", "alice", "gold");
        assertThat(unknown.headers().firstValue("RateLimit-Policy")).as("an unknown plan").hasValue("\"api\";q=2;w=60");
        call(http, "/quota", "alice", "gold");
        assertThat(output.getOut().split("has no plan 'gold'", -1)).as("logged once").hasSize(2);
        assertThat(output.getOut()).contains("Limit 'api' has no plan 'gold', so its own limit of 2 applies to"
                + " callers on it; its plans are [pro].");

        // RateLimiters with a plan counts in the same counter as the annotation.
        assertThat(rateLimiters.tryAcquire("api", "bob", 3, "pro").remaining()).isEqualTo(1);
        assertThat(statuses(http, "/quota", "bob", "pro", 2)).containsExactly(200, 429);

        // A URL rule, with the plan from limiter.limits.files.plan: 1 a minute, 3 on pro.
        assertThat(statuses(http, "/files/report", "carol", null, 2)).containsExactly(200, 429);
        HttpResponse<String> file = call(http, "/files/report", "carol", "pro");
        assertThat(file.statusCode()).isEqualTo(200);
        assertThat(file.headers().firstValue("RateLimit-Policy")).hasValue("\"files\";q=3;w=60");
        assertThat(statuses(http, "/files/report", "carol", "pro", 2)).containsExactly(200, 429);

        // The annotation's own plan attribute: 1 a minute, 2 on team.
        assertThat(statuses(http, "/search?customer=dave&plan=team", null, null, 3)).containsExactly(200, 200, 429);
        assertThat(http.get("/search?customer=erin").headers().firstValue("RateLimit-Policy"))
                .hasValue("\"search\";q=1;w=60");

        assertThat(http.get("/actuator/ratelimiters/api").body()).contains("\"plans\":{\"pro\":{\"limit\":4}}");
        assertThat(http.get("/actuator/ratelimiters/api?key=alice").body()).contains("\"used\":4");
    }

    private static List<Integer> statuses(LocalHttp http, String path, String customer, String plan, int calls)
            throws Exception {
        return http.statuses(calls, () -> request(http, path, customer, plan));
    }

    private static HttpResponse<String> call(LocalHttp http, String path, String customer, String plan)
            throws Exception {
        return http.send(request(http, path, customer, plan));
    }

    private static HttpRequest.Builder request(LocalHttp http, String path, String customer, String plan) {
        HttpRequest.Builder request = http.request(path);
        if (customer != null) {
            request.header("X-Customer", customer);
        }
        if (plan != null) {
            request.header("X-Plan", plan);
        }
        return request;
    }

    private static ConfigurableApplicationContext start(String... more) {
        return LocalHttp.start(PlansApplication.class, List.of("management.endpoints.web.exposure.include=ratelimiters",
                "limiter.limits.api.limit=2", "limiter.limits.api.window=1m",
                "limiter.limits.api.plan=#request.getHeader('X-Plan')", "limiter.limits.api.plans.pro.limit=4",
                "limiter.limits.files.limit=1", "limiter.limits.files.window=1m",
                "limiter.limits.files.plan=#request.getHeader('X-Plan')", "limiter.limits.files.plans.pro.limit=3",
                "limiter.limits.search.limit=1", "limiter.limits.search.window=1m",
                "limiter.limits.search.plans.team.limit=2",
                "limiter.http.rules[0].limit=files", "limiter.http.rules[0].path=/files/**",
                "limiter.http.rules[0].key=#request.getHeader('X-Customer')"), more);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, PlansApplication.Endpoints.class })
    static class PlansApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/quota")
            @RateLimited(name = "api", key = "#request.getHeader('X-Customer')")
            String quota() {
                return "quota";
            }

            @GetMapping("/files/report")
            String report() {
                return "report";
            }

            @GetMapping("/search")
            @RateLimited(name = "search", key = "#customer", plan = "#plan")
            String search(@RequestParam String customer, @RequestParam(required = false) String plan) {
                return "results";
            }

        }

    }

}
