package io.slidinglimiter.redis;

import java.util.function.BooleanSupplier;

import io.slidinglimiter.failover.FailoverStatus;

/**
 * What the Redis backend can tell of itself, for health or the endpoint.
 * <p>
 * The failover's status (whether Redis is failing it, what fell back, this instance's leases) and
 * the script. Every method only reads; none waits for Redis but {@link #isScriptLoaded()}.
 */
public final class RedisStatus extends FailoverStatus {

    private final BooleanSupplier scriptLoaded;

    RedisStatus(FailoverStatus failover, BooleanSupplier scriptLoaded) {
        super(failover);
        this.scriptLoaded = scriptLoaded;
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
