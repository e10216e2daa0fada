package io.slidinglimiter.actuate;

import java.util.List;
import java.util.Map;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.slidinglimiter.redis.RedisStatus;

/**
 * The {@code ratelimiter} health: DOWN while recent decisions fail in Redis (unreachable, timing
 * out, out of memory, read-only, script errors), UP once they succeed again. A check only reads:
 * when no decision failed, it asks Redis whether it holds the script ({@code SCRIPT EXISTS}),
 * within {@code limiter.redis.timeout}. The details give each Redis limit's own failure policy, so
 * that what DOWN costs is plain: fail-open admits, fail-closed rejects, local counts per instance.
 * On Cluster, {@code failingShards} names the nodes whose breaker keeps calls away.
 */
public class RateLimiterHealthIndicator extends AbstractHealthIndicator {

    private final RedisStatus redis;

    private final Map<String, String> policies;

    /**
     * Creates the indicator.
     * @param redis the Redis backend's status: the outcome of recent decisions, and a read of Redis
     * @param policies each configured Redis limit's failure policy, by name
     */
    public RateLimiterHealthIndicator(RedisStatus redis, Map<String, String> policies) {
        super("Rate limiter health check failed");
        this.redis = redis;
        this.policies = Map.copyOf(policies);
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("onFailure", this.redis.defaultPolicy().id())
                .withDetail("limits", this.policies)
                .withDetail("circuit", this.redis.isCircuitOpen() ? "open" : "closed")
                .withDetail("fallbackDecisions", this.redis.fallbackDecisions())
                .withDetail("slowDecisions", this.redis.slowDecisions());
        List<String> failingShards = this.redis.openShards();
        if (this.redis.isFailing() || !failingShards.isEmpty()) {
            builder.down().withDetail("redis", "DOWN").withDetail("error", this.redis.lastFailure());
            if (!failingShards.isEmpty() && !failingShards.equals(List.of(""))) {
                builder.withDetail("failingShards", failingShards);
            }
            return;
        }
        try {
            boolean loaded = this.redis.isScriptLoaded();
            builder.up().withDetail("redis", "UP").withDetail("script", loaded ? "loaded" : "loads on next decision");
        }
        catch (RuntimeException ex) {
            builder.down().withDetail("redis", "DOWN").withDetail("error", String.valueOf(ex.getMessage()));
        }
    }

}
