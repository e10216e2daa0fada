package io.slidinglimiter.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
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
 * Shadow mode over real HTTP (issue 18, item 2): a limit with {@code shadow: true} never turns a
 * request away, shows no RateLimit header, and counts what it would have rejected, on the annotation
 * and on a URL rule, locally and on Redis; an enforcing limit beside it still enforces.
 */
class ShadowModeIntegrationTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClassKeepingData();

    @Test
    void onTheLocalBackend() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            shadowLimitsNeverRejectAndCountWhatTheyWouldHave(LocalHttp.of(context));
        }
    }

    @Test
    void onRedis() throws Exception {
        try (ConfigurableApplicationContext context = start(redis.limiterProperties())) {
            shadowLimitsNeverRejectAndCountWhatTheyWouldHave(LocalHttp.of(context));
        }
    }

    private static void shadowLimitsNeverRejectAndCountWhatTheyWouldHave(LocalHttp http) throws Exception {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> response = http.get("/greet");
            statuses.add(response.statusCode());
            assertThat(response.headers().firstValue("RateLimit")).as("no header shows a shadow limit").isEmpty();
        }
        for (int i = 0; i < 4; i++) {
            statuses.add(http.get("/news/today").statusCode());
        }
        assertThat(statuses).containsOnly(200);
        assertThat(http.get("/enforced").statusCode()).isEqualTo(200);
        HttpResponse<String> enforced = http.get("/enforced");
        assertThat(enforced.statusCode()).as("an enforcing limit beside them").isEqualTo(429);
        assertThat(enforced.headers().firstValue("RateLimit-Policy")).hasValue("\"enforced\";q=1;w=60");
        assertThat(http.get("/actuator/ratelimiters/greet?key=*").body()).contains("\"shadow\":true")
                .contains("\"allowed\":3").contains("\"rejected\":0").contains("\"shadowRejected\":2")
                .contains("\"used\":3");
        assertThat(http.get("/actuator/ratelimiters/news").body()).contains("\"shadowRejected\":2");
        assertThat(http.get("/actuator/metrics/limiter.requests?tag=limit:greet&tag=outcome:shadow-rejected").body())
                .contains("\"value\":2.0");
    }

    private static ConfigurableApplicationContext start(String... more) {
        return LocalHttp.start(ShadowApplication.class, List.of(
                "management.endpoints.web.exposure.include=ratelimiters,metrics",
                "limiter.limits.greet.limit=3", "limiter.limits.greet.window=1m", "limiter.limits.greet.shadow=true",
                "limiter.limits.news.limit=2", "limiter.limits.news.window=1m", "limiter.limits.news.shadow=true",
                "limiter.http.rules[0].limit=news", "limiter.http.rules[0].path=/news/**"), more);
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, ShadowApplication.Endpoints.class })
    static class ShadowApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/greet")
            @RateLimited(name = "greet")
            String greet() {
                return "hello";
            }

            @GetMapping("/news/today")
            String news() {
                return "news";
            }

            @GetMapping("/enforced")
            @RateLimited(name = "enforced", limit = 1, window = "1m")
            String enforced() {
                return "enforced";
            }

        }

    }

}
