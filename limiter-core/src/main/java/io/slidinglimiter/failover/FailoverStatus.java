package io.slidinglimiter.failover;

import java.util.List;

import io.slidinglimiter.core.LimitDefinition;

/**
 * What a {@link ResilientBackend} can tell of its failover, for health or the endpoint.
 * <p>
 * Whether the server is failing it, which shards' breakers are open, what fell back, this instance's
 * leases. Every method only reads.
 */
public class FailoverStatus {

    private final Outage outage;

    private final ShardBreakers breakers;

    private final FailurePolicies policies;

    private final SlowCalls slowCalls;

    private final RemoteLeases leases;

    FailoverStatus(Outage outage, ShardBreakers breakers, FailurePolicies policies, SlowCalls slowCalls,
            RemoteLeases leases) {
        this.outage = outage;
        this.breakers = breakers;
        this.policies = policies;
        this.slowCalls = slowCalls;
        this.leases = leases;
    }

    /**
     * The status of the same failover, for a backend's status that tells more.
     * @param failover the failover's status
     */
    protected FailoverStatus(FailoverStatus failover) {
        this(failover.outage, failover.breakers, failover.policies, failover.slowCalls, failover.leases);
    }

    /** @return the server's name as operators know it: {@code "Redis"}, {@code "PostgreSQL"} */
    public String serverName() {
        return this.outage.serverName();
    }

    /**
     * Whether the server answered a failed call with an error, rather than not at all (out of reach,
     * too slow): what an operation it failed says.
     * @param failure what a call to the server failed with
     * @return whether the server answered
     */
    public boolean answered(Throwable failure) {
        return this.outage.answered(failure);
    }

    /**
     * Whether the server is failing decisions now: from the first failure until decisions succeed
     * again with none failing for a second. A slow call while the server answers others is not a
     * failure.
     * @return whether an outage is going on
     */
    public boolean isFailing() {
        return this.outage.isFailing();
    }

    /** @return the message of the last failure, or empty */
    public String lastFailure() {
        return this.outage.cause();
    }

    /** @return whether a circuit breaker keeps calls away from the server, or from a shard of it */
    public boolean isCircuitOpen() {
        return this.breakers.anyOpen();
    }

    /**
     * The shards whose breaker keeps calls away now, as {@link RemoteBackend#shardOf} names them.
     * @return the failing shards, sorted
     */
    public List<String> openShards() {
        return this.breakers.openShards();
    }

    /** @return decisions taken without the server since start */
    public long fallbackDecisions() {
        return this.policies.fallbackDecisions();
    }

    /** @return decisions that waited longer than the timeout while the server answered other calls */
    public long slowDecisions() {
        return this.slowCalls.count();
    }

    /** @return permits that fallbacks admitted and that were counted on the server afterwards, since start */
    public long reportedFallbackPermits() {
        return this.policies.reportedFallbackPermits();
    }

    /** @return the policy of limits without their own */
    public FailurePolicy defaultPolicy() {
        return this.policies.defaultPolicy();
    }

    /**
     * The policy a limit follows while the server fails.
     * @param limitName the limit's name
     * @return its own policy, or the default
     */
    public FailurePolicy policyOf(String limitName) {
        return this.policies.policyOf(limitName);
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

}
