package io.slidinglimiter.local;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.LongAdder;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.core.WindowCounter;

/**
 * In-process counters, one per (limit name, key), for a single application instance.
 * <pre>{@code
 * LocalBackend backend = new LocalBackend(TimeSource.monotonic(), 1_000_000);
 * Decision decision = backend.tryAcquire(LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12), "alice", 1);
 * }</pre>
 * <p>
 * <b>Memory.</b> A counter not used for as long as its window holds nothing and is dropped. The
 * number of live counters is bounded by {@code maxKeys}: past the bound, the counter least likely
 * to be used again is dropped (Caffeine's W-TinyLFU policy, recency and frequency, so a flood of
 * one-off keys evicts itself before it displaces busy keys) and its key starts afresh on its next
 * call. Such evictions forget counts, so they are counted ({@link #evictions()}) for metrics; a bound
 * that evicts often is too small. Eviction runs on {@link ForkJoinPool#commonPool()} by default, so
 * the live count may pass the bound for a moment under a burst of new keys.
 * <p>
 * <b>Limits changed at run time.</b> The definition passed to each call applies: a new
 * {@code limit} keeps the counts; a new window, number of sub-windows or algorithm starts a fresh
 * counter.
 */
public class LocalBackend implements RateLimitBackend {

    /** The default bound on live counters. */
    public static final long DEFAULT_MAX_KEYS = 1_000_000;

    private final TimeSource timeSource;

    private final Cache<CounterKey, WindowCounter> counters;

    private final LongAdder evictions = new LongAdder();

    /**
     * Creates a backend on the monotonic clock with the default bound.
     */
    public LocalBackend() {
        this(TimeSource.monotonic(), DEFAULT_MAX_KEYS);
    }

    /**
     * Creates a backend.
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     */
    public LocalBackend(TimeSource timeSource, long maxKeys) {
        this(timeSource, maxKeys, ForkJoinPool.commonPool());
    }

    LocalBackend(TimeSource timeSource, long maxKeys, Executor maintenanceExecutor) {
        if (maxKeys <= 0) {
            throw new IllegalArgumentException("max-keys must be greater than 0 but was " + maxKeys);
        }
        this.timeSource = timeSource;
        this.counters = Caffeine.newBuilder()
                .maximumSize(maxKeys)
                .expireAfter(new IdleForOneWindow())
                .ticker(() -> timeSource.currentTimeMillis() * 1_000_000L)
                .executor(maintenanceExecutor)
                .evictionListener((CounterKey key, WindowCounter counter, RemovalCause cause) -> {
                    if (cause == RemovalCause.SIZE) {
                        this.evictions.increment();
                    }
                })
                .build();
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        long nowMillis = this.timeSource.currentTimeMillis();
        return counterFor(limit, key, nowMillis).tryAcquire(nowMillis, cost, limit.limit());
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        long nowMillis = this.timeSource.currentTimeMillis();
        int count = requests.size();
        WindowCounter[] counters = new WindowCounter[count];
        long[] costs = new long[count];
        long[] limits = new long[count];
        for (int i = 0; i < count; i++) {
            LimitRequest request = requests.get(i);
            counters[i] = counterFor(request.limit(), request.key(), nowMillis);
            costs[i] = request.cost();
            limits[i] = request.limit().limit();
        }
        return WindowCounter.tryAcquireAll(nowMillis, counters, costs, limits);
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        long nowMillis = this.timeSource.currentTimeMillis();
        WindowCounter counter = this.counters.getIfPresent(new CounterKey(limit.name(), key));
        if (counter == null || !counter.countsFor(limit)) {
            return new Decision(true, limit.limit(), limit.limit(), 0, 0);
        }
        return counter.peek(nowMillis, limit.limit());
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        WindowCounter counter = this.counters.getIfPresent(new CounterKey(limit.name(), key));
        if (counter != null) {
            counter.reset();
        }
    }

    /**
     * The number of counters held now, after dropping idle and excess ones.
     * @return the live counter count
     */
    public long liveCounters() {
        this.counters.cleanUp();
        return this.counters.estimatedSize();
    }

    /**
     * How many live counters were dropped because the bound was reached.
     * @return the eviction count since start
     */
    public long evictions() {
        return this.evictions.sum();
    }

    private WindowCounter counterFor(LimitDefinition limit, String key, long nowMillis) {
        CounterKey counterKey = new CounterKey(limit.name(), key);
        WindowCounter counter = this.counters.getIfPresent(counterKey);
        if (counter != null && counter.countsFor(limit)) {
            return counter;
        }
        return this.counters.asMap().compute(counterKey, (ignored, existing) ->
                (existing != null && existing.countsFor(limit)) ? existing : WindowCounter.create(limit, nowMillis));
    }

    /** Limit names and keys are kept apart, so no key can collide with another limit's. */
    private record CounterKey(String limitName, String key) {
    }

    /** A counter idle for one window holds nothing: drop it then. */
    private static final class IdleForOneWindow implements Expiry<CounterKey, WindowCounter> {

        @Override
        public long expireAfterCreate(CounterKey key, WindowCounter counter, long currentTime) {
            return counter.windowMillis() * 1_000_000L;
        }

        @Override
        public long expireAfterUpdate(CounterKey key, WindowCounter counter, long currentTime, long currentDuration) {
            return counter.windowMillis() * 1_000_000L;
        }

        @Override
        public long expireAfterRead(CounterKey key, WindowCounter counter, long currentTime, long currentDuration) {
            return counter.windowMillis() * 1_000_000L;
        }

    }

}
