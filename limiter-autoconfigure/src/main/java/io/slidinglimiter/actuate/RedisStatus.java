package io.slidinglimiter.actuate;

import java.util.Map;

import io.slidinglimiter.core.LimitDefinition;

/**
 * Whether Redis is deciding the limiter's Redis limits now: for the endpoint, which then says that
 * a key's usage is a local count, and for health. No Redis type, so that it loads without Redis.
 */
public interface RedisStatus {

    /** @return whether Redis fails decisions now (unreachable, timing out, refusing writes) */
    boolean isFailing();

    /** @return the message of the last failure, or empty */
    String lastFailure();

    /**
     * Whether a limit takes leases on this instance.
     * @param limit its definition in force
     * @return whether it does
     */
    default boolean leases(LimitDefinition limit) {
        return false;
    }

    /**
     * A limit's decisions with leases on this instance since start.
     * @param limitName the limit's name
     * @return {@code fromLease}, {@code fromRedis}, {@code leasesTaken}, {@code givenBack}, {@code lost}
     */
    default Map<String, Long> leaseCounts(String limitName) {
        return Map.of();
    }

    /**
     * A key's lease on this instance.
     * @param limitName the limit's name
     * @param key the counter key
     * @return {@code held}, and while held {@code left}, {@code taken} and {@code endsInMillis}
     */
    default Map<String, Object> leaseState(String limitName, String key) {
        return Map.of("held", false);
    }

}
