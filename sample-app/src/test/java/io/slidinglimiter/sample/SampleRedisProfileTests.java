package io.slidinglimiter.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample in the redis profile, on a redis-server of the test's own: they share
 * one limit, as the README shows.
 */
class SampleRedisProfileTests {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void twoInstancesShareOneLimit() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext first = instance(redis);
                ConfigurableApplicationContext second = instance(redis)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(status((i % 2 == 0) ? first : second, "/api/hello"));
            }
            assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
        }
    }

    @Test
    void theLeasedPublicLimitStillAdmitsExactlyTenAcrossTwoInstances() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext first = instance(redis);
                ConfigurableApplicationContext second = instance(redis)) {
            int admitted = 0;
            for (int i = 0; i < 20; i++) {
                admitted += (status((i % 2 == 0) ? first : second, "/public/news") == 200) ? 1 : 0;
            }
            assertThat(admitted).isEqualTo(10);
            assertThat(body(first, "/actuator/ratelimiters/public")).contains("\"lease\":{\"fromLease\":");
        }
    }

    private static ConfigurableApplicationContext instance(RedisServer redis) {
        return new SpringApplicationBuilder(SampleApplication.class).profiles("redis")
                .properties("server.port=0", "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.host=127.0.0.1", "limiter.redis.timeout=5s")
                .run();
    }

    private String body(ConfigurableApplicationContext instance, String path) throws Exception {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private int status(ConfigurableApplicationContext instance, String path) throws Exception {
        int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
        return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

}
