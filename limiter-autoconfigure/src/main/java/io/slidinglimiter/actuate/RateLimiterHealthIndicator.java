package io.slidinglimiter.actuate;

import java.util.function.BooleanSupplier;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.slidinglimiter.redis.FailurePolicy;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.ResilientRedisBackend;

/**
 * The {@code ratelimiter} health: whether Redis answers and holds the limiter's script. A Redis
 * outage turns the application DOWN only when a limit on Redis fails closed (it then rejects
 * calls); under fail-open or local the application still serves, so it stays UP, with the outage
 * in the details.
 */
public class RateLimiterHealthIndicator extends AbstractHealthIndicator {

    private final LettuceScriptRunner runner;

    private final ResilientRedisBackend backend;

    private final BooleanSupplier anyFailsClosed;

    private final FailurePolicy defaultPolicy;

    /**
     * Creates the indicator.
     * @param runner talks to Redis
     * @param backend the Redis backend, for its circuit and fallbacks
     * @param defaultPolicy limiter.redis.on-failure
     * @param anyFailsClosed whether any limit on Redis fails closed
     */
    public RateLimiterHealthIndicator(LettuceScriptRunner runner, ResilientRedisBackend backend,
            FailurePolicy defaultPolicy, BooleanSupplier anyFailsClosed) {
        super("Rate limiter health check failed");
        this.runner = runner;
        this.backend = backend;
        this.defaultPolicy = defaultPolicy;
        this.anyFailsClosed = anyFailsClosed;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("onFailure", this.defaultPolicy.name().toLowerCase().replace('_', '-'))
                .withDetail("circuit", this.backend.isCircuitOpen() ? "open" : "closed")
                .withDetail("fallbackDecisions", this.backend.fallbackDecisions());
        try {
            boolean loaded = this.runner.isScriptLoaded();
            builder.up().withDetail("redis", "UP").withDetail("script", loaded ? "loaded" : "loads on next decision");
        }
        catch (RuntimeException ex) {
            builder.withDetail("redis", "DOWN").withDetail("error", String.valueOf(ex.getMessage()));
            if (this.anyFailsClosed.getAsBoolean()) {
                builder.down();
            }
            else {
                builder.up();
            }
        }
    }

}
