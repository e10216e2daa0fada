package io.slidinglimiter.standalone;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.ResilientRedisBackend;

/**
 * What the README's "Using the core without Spring" shows, run by {@link CoreWithoutSpringTests} in
 * a class loader that has no Spring: names nothing of Spring itself.
 */
public final class WithoutSpringScenario {

    private WithoutSpringScenario() {
    }

    /**
     * Three calls against a limit of two, locally and on Redis through a plain Lettuce client.
     * @param redisUri the Redis to use
     * @return each call's verdict, local ones first
     */
    public static List<Boolean> run(String redisUri) {
        List<Boolean> verdicts = new ArrayList<>();
        LimitRegistry registry = new LimitRegistry();
        registry.register(LimitDefinition.of("login", 2, Duration.ofMinutes(1), 12));
        RateLimiters local = new RateLimiters(registry, new LocalBackend(TimeSource.ticking(), 1_000));
        for (int i = 0; i < 3; i++) {
            verdicts.add(local.tryAcquire("login", "alice").allowed());
        }
        RedisClient client = RedisClient.create(redisUri);
        // A timeout far longer than a decision takes: this is about running without Spring, and a cold
        // class loader on a busy machine must not be taken for a failing Redis.
        try (LettuceScriptRunner runner = new LettuceScriptRunner(client, Duration.ofSeconds(5),
                Duration.ofSeconds(5))) {
            ResilientRedisBackend redis = new ResilientRedisBackend(
                    new RedisBackend(runner, new RedisKeys("limiter"), null),
                    new LocalBackend(TimeSource.monotonic(), 1_000),
                    new ResilientRedisBackend.Settings(FailurePolicy.FAIL_CLOSED, java.util.Map.of(), 3, 1_000, 1_000),
                    TimeSource.monotonic(), (limit) -> { });
            RateLimiters shared = new RateLimiters(registry, redis);
            for (int i = 0; i < 3; i++) {
                Decision decision = shared.tryAcquire("login", "alice");
                verdicts.add(decision.allowed());
            }
            redis.close();
        }
        finally {
            client.shutdown();
        }
        return verdicts;
    }

}
