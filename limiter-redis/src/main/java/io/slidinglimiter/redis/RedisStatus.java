package io.slidinglimiter.redis;

import java.util.function.BooleanSupplier;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.failover.FailoverStatus;

/**
 * What the Redis backend can tell of itself, for health or the endpoint.
 * <p>
 * The failover's status (whether Redis is failing it, what fell back), this instance's leases, the
 * script. Every method only reads; none waits for Redis but {@link #isScriptLoaded()}.
 */
public final class RedisStatus extends FailoverStatus {

    private final Leases leases;

    private final BooleanSupplier scriptLoaded;

    RedisStatus(FailoverStatus failover, Leases leases, BooleanSupplier scriptLoaded) {
        super(failover);
        this.leases = leases;
        this.scriptLoaded = scriptLoaded;
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
