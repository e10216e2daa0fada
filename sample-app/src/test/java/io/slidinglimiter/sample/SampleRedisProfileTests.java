package io.slidinglimiter.sample;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the sample in the redis profile, on a redis-server of the test's own: they share
 * one limit, as the README shows.
 */
class SampleRedisProfileTests {

    @Test
    void twoInstancesShareOneLimit() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext first = instance(redis);
                ConfigurableApplicationContext second = instance(redis)) {
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                statuses.add(Instances.status((i % 2 == 0) ? first : second, "/api/hello"));
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
                admitted += (Instances.status((i % 2 == 0) ? first : second, "/public/news") == 200) ? 1 : 0;
            }
            assertThat(admitted).isEqualTo(10);
            assertThat(Instances.body(first, "/actuator/ratelimiters/public")).contains("\"lease\":{\"fromLease\":");
        }
    }

    private static ConfigurableApplicationContext instance(RedisServer redis) {
        return new SpringApplicationBuilder(SampleApplication.class).profiles("redis")
                .properties("server.port=0", "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.host=127.0.0.1", "limiter.redis.timeout=5s")
                .run();
    }

}
