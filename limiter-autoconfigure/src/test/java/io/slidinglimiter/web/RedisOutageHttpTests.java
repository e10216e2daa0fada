package io.slidinglimiter.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A running application whose redis-server (the test's own) is stopped: no limited endpoint ever
 * answers 500, whatever the failure policy.
 */
class RedisOutageHttpTests {

    private RedisServer server;

    @BeforeEach
    void startRedis() {
        this.server = RedisServer.start();
    }

    @AfterEach
    void stopRedis() {
        this.server.close();
    }

    @Test
    void failOpenServesAndFailClosedAnswers429WithRetryAfterButNever500() throws Exception {
        for (String policy : List.of("fail-open", "fail-closed", "local")) {
            this.server.restart();
            try (ConfigurableApplicationContext context = new SpringApplicationBuilder(OutageApplication.class)
                    .properties("server.port=0", "spring.data.redis.host=127.0.0.1",
                            "spring.data.redis.port=" + this.server.port(), "limiter.backend=redis",
                            "limiter.redis.on-failure=" + policy, "limiter.redis.timeout=200ms",
                            "limiter.limits.news.limit=3", "limiter.limits.news.window=1m",
                            "limiter.http.rules[0].limit=news", "limiter.http.rules[0].path=/news")
                    .run()) {
                LocalHttp http = LocalHttp.of(context);
                assertThat(http.get("/hello").statusCode()).isEqualTo(200);
                this.server.stop();
                List<Integer> statuses = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    for (String path : List.of("/hello", "/news")) {
                        HttpResponse<String> response = http.get(path);
                        statuses.add(response.statusCode());
                        if (response.statusCode() == 429) {
                            assertThat(response.headers().firstValue("Retry-After")).as(policy).isPresent();
                            if (policy.equals("fail-closed")) {
                                assertThat(response.body()).contains("could not be checked");
                            }
                        }
                        assertThat(response.body()).doesNotContain("Exception");
                    }
                }
                assertThat(statuses).as(policy).doesNotContain(500);
                switch (policy) {
                    case "fail-open" -> assertThat(statuses).containsOnly(200);
                    case "fail-closed" -> assertThat(statuses).containsOnly(429);
                    // Each limit counts in this instance at its own limit of 3, starting from what Redis last
                    // said: /hello was called once before the outage.
                    default -> assertThat(statuses.stream().filter((status) -> status == 200)).hasSize(2 + 3);
                }
            }
        }
    }

    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import({ OpenSecurity.class, OutageApplication.Endpoints.class })
    static class OutageApplication {

        @RestController
        static class Endpoints {

            @GetMapping("/hello")
            @RateLimited(name = "hello", limit = 3, window = "1m")
            String hello() {
                return "hello";
            }

            @GetMapping("/news")
            String news() {
                return "news";
            }

        }

    }

}
