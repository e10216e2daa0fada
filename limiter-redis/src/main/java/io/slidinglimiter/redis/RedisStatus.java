package io.slidinglimiter.redis;

import java.util.List;
import java.util.function.BooleanSupplier;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.failover.FailoverStatus;
import io.slidinglimiter.failover.FailurePolicy;

/**
 * What the Redis backend can tell of itself, for health or the endpoint.
 * <p>
 * What the Redis backend can tell of itself, for health and the endpoint: whether Redis is failing
 * it, what fell back, and this instance's leases. Every method only reads; none waits for Redis but
 * {@link #isScriptLoaded()}.
 */
public final class RedisStatus {

    private final FailoverStatus failover;

    private final Leases leases;

    private final BooleanSupplier scriptLoaded;

    RedisStatus(FailoverStatus failover, Leases leases, BooleanSupplier scriptLoaded) {
        this.failover = failover;
        this.leases = leases;
        this.scriptLoaded = scriptLoaded;
    }

    /**
     * Whether Redis is failing decisions now: from the first failure until decisions succeed again
     * with none failing for a second. A slow call while Redis answers others is not a failure.
     * @return whether an outage is going on
     */
    public boolean isFailing() {
        return this.failover.isFailing();
    }

    /** @return the message of the last failure, or empty */
    public String lastFailure() {
        return this.failover.lastFailure();
    }

    /** @return whether a circuit breaker keeps calls away from Redis, or from a shard of it */
    public boolean isCircuitOpen() {
        return this.failover.isCircuitOpen();
    }

    /**
     * The shards whose breaker keeps calls away now: on Cluster the ids of the failing nodes that
     * still serve slots, {@code ""} for a standalone or Sentinel Redis.
     * @return the failing shards, sorted
     */
    public List<String> openShards() {
        return this.failover.openShards();
    }

    /** @return decisions taken without Redis since start */
    public long fallbackDecisions() {
        return this.failover.fallbackDecisions();
    }

    /** @return decisions that waited longer than the timeout while Redis answered other commands */
    public long slowDecisions() {
        return this.failover.slowDecisions();
    }

    /** @return permits that fallbacks admitted and that were counted in Redis afterwards, since start */
    public long reportedFallbackPermits() {
        return this.failover.reportedFallbackPermits();
    }

    /** @return the policy of limits without their own */
    public FailurePolicy defaultPolicy() {
        return this.failover.defaultPolicy();
    }

    /**
     * The policy a limit follows while Redis fails.
     * @param limitName the limit's name
     * @return its own policy, or the default
     */
    public FailurePolicy policyOf(String limitName) {
        return this.failover.policyOf(limitName);
    }

    /**
     * Whether a limit takes leases on this instance.
     * @param limit its definition in force
     * @return whether it does
     */
    public boolean leases(LimitDefinition limit) {
        return this.leases != null && this.leases.covers(limit);
    }

    /**
     * A limit's decisions with leases since start.
     * @param limitName the limit's name
     * @return its counts; zeros when it does not lease
     */
    public LeaseCounts leaseCounts(String limitName) {
        return (this.leases != null) ? this.leases.counts(limitName) : LeaseCounts.NONE;
    }

    /**
     * A key's lease on this instance.
     * @param limitName the limit's name
     * @param key the counter key
     * @return its state; not held when none is, or the limit does not lease
     */
    public LeaseState leaseState(String limitName, String key) {
        return (this.leases != null) ? this.leases.state(limitName, key) : LeaseState.NONE;
    }

    /**
     * Asks Redis whether it answers within the timeout and holds the limiter's script.
     * @return whether the script is loaded
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    public boolean isScriptLoaded() {
        return this.scriptLoaded.getAsBoolean();
    }

}
