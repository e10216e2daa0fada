package io.slidinglimiter.actuate;

import java.util.List;
import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.slidinglimiter.redis.FailurePolicy;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.ResilientRedisBackend;

/**
 * The {@code ratelimiter} health: DOWN while recent decisions fail in Redis (unreachable, timing
 * out, out of memory, read-only, script errors), UP once they succeed again. A check only reads:
 * when no decision failed, it asks Redis whether it holds the script ({@code SCRIPT EXISTS}),
 * within {@code limiter.redis.timeout}. The details give each Redis limit's own failure policy, so
 * that what DOWN costs is plain: fail-open admits, fail-closed rejects, local counts per instance.
 * On Cluster, {@code failingShards} names the nodes whose breaker keeps calls away.
 */
public class RateLimiterHealthIndicator extends AbstractHealthIndicator {

    private final LettuceScriptRunner runner;

    private final ResilientRedisBackend backend;

    private final FailurePolicy defaultPolicy;

    private final Map<String, String> policies;

    /**
     * Creates the indicator.
     * @param runner talks to Redis
     * @param backend the Redis backend, for the outcome of recent decisions
     * @param defaultPolicy limiter.redis.on-failure
     * @param policies each configured Redis limit's failure policy, by name
     */
    public RateLimiterHealthIndicator(LettuceScriptRunner runner, ResilientRedisBackend backend,
            FailurePolicy defaultPolicy, Map<String, String> policies) {
        super("Rate limiter health check failed");
        this.runner = runner;
        this.backend = backend;
        this.defaultPolicy = defaultPolicy;
        this.policies = Map.copyOf(policies);
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("onFailure", this.defaultPolicy.id())
                .withDetail("limits", this.policies)
                .withDetail("circuit", this.backend.isCircuitOpen() ? "open" : "closed")
                .withDetail("fallbackDecisions", this.backend.fallbackDecisions())
                .withDetail("slowDecisions", this.backend.slowDecisions());
        List<String> failingShards = this.backend.openShards();
        if (this.backend.isFailing() || !failingShards.isEmpty()) {
            builder.down().withDetail("redis", "DOWN").withDetail("error", this.backend.lastFailure());
            if (!failingShards.isEmpty() && !failingShards.equals(List.of(""))) {
                builder.withDetail("failingShards", failingShards);
            }
            return;
        }
        try {
            boolean loaded = this.runner.isScriptLoaded();
            builder.up().withDetail("redis", "UP").withDetail("script", loaded ? "loaded" : "loads on next decision");
        }
        catch (RuntimeException ex) {
            builder.down().withDetail("redis", "DOWN").withDetail("error", String.valueOf(ex.getMessage()));
        }
    }

}
