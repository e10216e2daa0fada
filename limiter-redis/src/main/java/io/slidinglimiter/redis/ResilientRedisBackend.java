package io.slidinglimiter.redis;

import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.Leases;
import io.slidinglimiter.failover.ResilientBackend;

/**
 * The Redis backend as applications use it: the core's failover over {@link RedisBackend}, with leases.
 * <p>
 * Never an exception for a Redis fault, never a wait longer than the script runner's timeout, and
 * no wait at all while Redis is known to be down ({@link ResilientBackend} says how). Limits that
 * lease ({@link Settings#leased()}) admit a busy key's calls from permits taken from Redis in
 * batches, exactly and never over the limit in any window; a live lease keeps admitting what it
 * holds while Redis fails.
 */
public final class ResilientRedisBackend extends ResilientBackend {

    private final RedisStatus status;

    /**
     * Creates the backend.
     * @param redis the Redis backend
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without Redis
     */
    public ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback) {
        this(redis, local, settings, timeSource, onFallback, null);
    }

    /**
     * Creates the backend with a probe that finds Redis again after an outage without waiting for a
     * decision to try.
     * @param redis the Redis backend
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without Redis
     * @param probe a read that answers whether Redis is reachable again, run twice a second while it
     * is not; null for none
     */
    public ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback, BooleanSupplier probe) {
        this(redis, local, settings, timeSource, onFallback, probe, true);
    }

    /**
     * @param sweepLeases whether a daemon thread gives back leases that ended without traffic; tests
     * that replay a schedule call {@link #sweepLeases()} instead
     */
    ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings, TimeSource timeSource,
            Consumer<LimitDefinition> onFallback, BooleanSupplier probe, boolean sweepLeases) {
        this(redis, local, settings, timeSource, onFallback, probe, (settings.leased() != null)
                ? new Leases(redis, timeSource, settings.leased(), settings.failover().maxKeys(), sweepLeases) : null);
    }

    private ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback, BooleanSupplier probe, Leases leases) {
        super(redis, local, settings.failover(), timeSource, onFallback, probe, leases);
        this.status = new RedisStatus(failoverStatus(), redis::isScriptLoaded);
    }

    /**
     * How the backend behaves when Redis fails.
     *
     * @param defaultPolicy the policy of limits without their own
     * @param policies the policy of each limit that has its own, by name
     * @param failureThreshold failures in a row that open the circuit breaker
     * @param openMillis how long the breaker stays open before a probe
     * @param denialCacheSize the most denials kept locally; 0 turns the cache off (also the most keys
     * holding a lease at once)
     * @param leased the names of the limits that take leases (those of the sliding window counter
     * do); null when none does
     */
    public record Settings(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int failureThreshold,
            long openMillis, int denialCacheSize, Predicate<String> leased) {

        /**
         * Settings without leases.
         * @param defaultPolicy the policy of limits without their own
         * @param policies the policy of each limit that has its own, by name
         * @param failureThreshold failures in a row that open the circuit breaker
         * @param openMillis how long the breaker stays open before a probe
         * @param denialCacheSize the most denials kept locally; 0 turns the cache off
         */
        public Settings(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int failureThreshold,
                long openMillis, int denialCacheSize) {
            this(defaultPolicy, policies, failureThreshold, openMillis, denialCacheSize, null);
        }

        /** @return the settings of the failover, without leases */
        public ResilientBackend.Settings failover() {
            return new ResilientBackend.Settings(this.defaultPolicy, this.policies, this.failureThreshold,
                    this.openMillis, this.denialCacheSize);
        }

    }

    /**
     * What this backend can tell of itself, for health and the endpoint.
     * @return its status, which only reads
     */
    public RedisStatus status() {
        return this.status;
    }

}
