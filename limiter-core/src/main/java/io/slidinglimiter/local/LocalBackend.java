package io.slidinglimiter.local;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.CounterKeys;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.OverflowSketch;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.core.WindowCounter;

/**
 * In-process counters, one per (limit name, key), for a single application instance.
 * <pre>{@code
 * LocalBackend backend = new LocalBackend(TimeSource.ticking(), 1_000_000);
 * Decision decision = backend.tryAcquire(LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12), "alice", 1);
 * }</pre>
 * <p>
 * <b>Memory.</b> Counters are bounded in number ({@code maxKeys}) and in estimated bytes
 * ({@code maxBytes}: each counter weighs its arrays, its key and their overhead); keys over
 * {@value CounterKeys#MAX_KEY_BYTES} UTF-8 bytes are stored as a digest. A counter that holds no
 * permit is dropped when room is needed (and at least once a minute), never one that holds some:
 * forgetting a count would let its key be admitted again.
 * <p>
 * <b>When the bound is reached</b> by counters that all hold permits (a flood of keys), a new key
 * is decided through its limit's {@link OverflowSketch}, which can only over-estimate. No flood,
 * in any limit, lets a key be admitted more than its limit per window, and a flood in one limit
 * never drops another limit's counters. What a flood costs is false rejections of new keys of the
 * flooded limit while it lasts, and of other limits' new keys only while the shared bound is full.
 * Such decisions are counted ({@link #overflowDecisions()}).
 * <p>
 * <b>Limits changed at run time.</b> The definition passed to each call applies: a new
 * {@code limit} keeps the counts; a new window, number of sub-windows or algorithm starts fresh
 * counters for that limit.
 */
public class LocalBackend implements RateLimitBackend {

    /** The default bound on live counters. */
    public static final long DEFAULT_MAX_KEYS = 1_000_000;

    /** The default bound on the estimated bytes of live counters: 256 MB. */
    public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;

    /** How often counters that hold nothing are dropped while the bounds leave room. */
    private static final long IDLE_SWEEP_MILLIS = 60_000;

    /** How often at most a full store looks for counters that hold nothing. */
    private static final long FULL_SWEEP_MILLIS = 1_000;

    private final TimeSource timeSource;

    private final long maxKeys;

    private final long maxBytes;

    private final Map<String, LimitCounters> limits = new ConcurrentHashMap<>();

    private final AtomicLong liveCounters = new AtomicLong();

    private final AtomicLong liveBytes = new AtomicLong();

    private final LongAdder overflowDecisions = new LongAdder();

    private final ReentrantLock sweepLock = new ReentrantLock();

    private volatile long nextIdleSweepMillis;

    private volatile long nextFullSweepMillis;

    /**
     * Creates a backend on the ticking monotonic clock ({@link TimeSource#ticking()}) with the default bounds.
     */
    public LocalBackend() {
        this(TimeSource.ticking(), DEFAULT_MAX_KEYS);
    }

    /**
     * Creates a backend with the default bound on bytes.
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     */
    public LocalBackend(TimeSource timeSource, long maxKeys) {
        this(timeSource, maxKeys, DEFAULT_MAX_BYTES);
    }

    /**
     * Creates a backend.
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     * @param maxBytes the most estimated bytes of counters kept at once, greater than 0
     */
    public LocalBackend(TimeSource timeSource, long maxKeys, long maxBytes) {
        if (maxKeys <= 0) {
            throw new IllegalArgumentException("max-keys must be greater than 0 but was " + maxKeys);
        }
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("max-memory must be greater than 0 but was " + maxBytes);
        }
        this.timeSource = timeSource;
        this.maxKeys = maxKeys;
        this.maxBytes = maxBytes;
        long now = timeSource.currentTimeMillis();
        this.nextIdleSweepMillis = now + IDLE_SWEEP_MILLIS;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.checkCost(limit, cost);
        long nowMillis = this.timeSource.currentTimeMillis();
        while (true) {
            Decision decision = counterFor(limit, key, nowMillis).tryAcquire(nowMillis, cost, limit.limit());
            if (decision != null) {
                return decision;
            }
        }
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        long nowMillis = this.timeSource.currentTimeMillis();
        int count = requests.size();
        long[] costs = new long[count];
        long[] limits = new long[count];
        for (int i = 0; i < count; i++) {
            LimitRequest request = requests.get(i);
            costs[i] = request.cost();
            limits[i] = request.limit().limit();
        }
        WindowCounter[] counters = new WindowCounter[count];
        while (true) {
            for (int i = 0; i < count; i++) {
                counters[i] = counterFor(requests.get(i).limit(), requests.get(i).key(), nowMillis);
            }
            Decisions decisions = WindowCounter.tryAcquireAll(nowMillis, counters, costs, limits);
            if (decisions != null) {
                return decisions;
            }
        }
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        long nowMillis = this.timeSource.currentTimeMillis();
        for (LimitRequest request : requests) {
            counterFor(request.limit(), request.key(), nowMillis)
                    .refund(nowMillis, taken.decidedAtMillis(), request.cost());
        }
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        long nowMillis = this.timeSource.currentTimeMillis();
        LimitCounters counters = this.limits.get(limit.name());
        if (counters == null || !counters.countsFor(limit)) {
            return new Decision(true, limit.limit(), limit.limit(), 0, 0);
        }
        StoredKey stored = StoredKey.of(counters, key);
        WindowCounter counter = stored.map().get(stored.key());
        Decision decision = (counter != null) ? counter.peek(nowMillis, limit.limit()) : null;
        return (decision != null) ? decision
                : counters.sketch.counterFor(stored.key(), () -> false).peek(nowMillis, limit.limit());
    }

    /**
     * {@inheritDoc}
     * <p>
     * A key decided through the overflow sketch shares its counts with other keys and cannot be
     * reset alone; it frees by itself within one window.
     */
    @Override
    public void reset(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        LimitCounters counters = this.limits.get(limit.name());
        StoredKey stored = (counters != null) ? StoredKey.of(counters, key) : null;
        WindowCounter counter = (stored != null) ? stored.map().get(stored.key()) : null;
        if (counter != null) {
            counter.reset();
        }
    }

    /**
     * The number of counters held now, after dropping those that hold nothing.
     * @return the live counter count
     */
    public long liveCounters() {
        sweep(this.timeSource.currentTimeMillis(), true);
        return this.liveCounters.get();
    }

    /**
     * The estimated bytes of the counters held now.
     * @return the estimate, at most {@code maxBytes}
     */
    public long liveBytes() {
        return this.liveBytes.get();
    }

    /**
     * How many decisions were taken through an overflow sketch because the bounds were full.
     * @return the count since start
     */
    public long overflowDecisions() {
        return this.overflowDecisions.sum();
    }

    private WindowCounter counterFor(LimitDefinition limit, String key, long nowMillis) {
        LimitCounters counters = countersOf(limit);
        // Keys are stored as they are, or by digest in a map of their own: a key found here is one
        // that was checked and stored as it is, so nothing of it needs reading again.
        WindowCounter counter = (key != null) ? counters.counters.get(key) : null;
        if (counter != null) {
            return counter;
        }
        LimitRequest.check(limit, key, 1);
        StoredKey stored = StoredKey.of(counters, key);
        // A short key was just looked up; a long one has its own map.
        counter = stored.isDigest() ? stored.map().get(stored.key()) : null;
        if (counter != null) {
            return counter;
        }
        long weight = counters.weightOf(stored.key());
        if (reserve(weight, nowMillis)) {
            WindowCounter created = counters.createIfSketchIsEmpty(stored, nowMillis);
            if (created != null) {
                return created;
            }
            release(weight);
            WindowCounter raced = stored.map().get(stored.key());
            if (raced != null) {
                return raced;
            }
        }
        this.overflowDecisions.increment();
        return counters.sketch.counterFor(stored.key(), () -> stored.map().get(stored.key()) != null);
    }

    private LimitCounters countersOf(LimitDefinition limit) {
        LimitCounters counters = this.limits.get(limit.name());
        if (counters != null && counters.countsFor(limit)) {
            return counters;
        }
        return this.limits.compute(limit.name(), (name, existing) -> {
            if (existing != null && existing.countsFor(limit)) {
                return existing;
            }
            if (existing != null) {
                existing.counters.forEach((key, counter) -> release(existing.weightOf(key)));
                existing.digests.forEach((key, counter) -> release(existing.weightOf(key)));
            }
            return new LimitCounters(limit);
        });
    }

    /** Takes room for one counter of {@code weight} bytes, dropping empty counters if needed. */
    private boolean reserve(long weight, long nowMillis) {
        if (nowMillis >= this.nextIdleSweepMillis) {
            sweep(nowMillis, false);
        }
        if (tryReserve(weight)) {
            return true;
        }
        if (nowMillis >= this.nextFullSweepMillis) {
            sweep(nowMillis, false);
            return tryReserve(weight);
        }
        return false;
    }

    private boolean tryReserve(long weight) {
        if (this.liveCounters.incrementAndGet() > this.maxKeys) {
            this.liveCounters.decrementAndGet();
            return false;
        }
        if (this.liveBytes.addAndGet(weight) > this.maxBytes) {
            release(weight);
            return false;
        }
        return true;
    }

    private void release(long weight) {
        this.liveCounters.decrementAndGet();
        this.liveBytes.addAndGet(-weight);
    }

    /** Drops the counters that hold nothing; one thread at a time, the others go on deciding. */
    private void sweep(long nowMillis, boolean wait) {
        if (wait) {
            this.sweepLock.lock();
        }
        else if (!this.sweepLock.tryLock()) {
            return;
        }
        try {
            this.nextIdleSweepMillis = nowMillis + IDLE_SWEEP_MILLIS;
            this.nextFullSweepMillis = nowMillis + FULL_SWEEP_MILLIS;
            for (LimitCounters counters : this.limits.values()) {
                for (Map<String, WindowCounter> map : List.of(counters.counters, counters.digests)) {
                    map.forEach((key, counter) -> {
                        if (counter.retireIfEmpty(nowMillis) && map.remove(key, counter)) {
                            release(counters.weightOf(key));
                        }
                    });
                }
            }
        }
        finally {
            this.sweepLock.unlock();
        }
    }

    /** One limit's counters, all of one geometry, with the sketch for keys that find no room. */
    private static final class LimitCounters {

        /** A counter's fixed cost beyond its arrays: object headers, fields, lock, map entry. */
        private static final long COUNTER_OVERHEAD_BYTES = 160;

        /** A key's cost beyond its characters: the String object and its array header. */
        private static final long KEY_OVERHEAD_BYTES = 40;

        /** Counters by key, for keys of at most {@value CounterKeys#MAX_KEY_BYTES} UTF-8 bytes. */
        private final Map<String, WindowCounter> counters = new ConcurrentHashMap<>();

        /** Counters of longer keys, by {@linkplain CounterKeys#digest(String) digest}. */
        private final Map<String, WindowCounter> digests = new ConcurrentHashMap<>();

        private final OverflowSketch sketch;

        private final LongFunction<WindowCounter> factory;

        private final long counterBytes;

        LimitCounters(LimitDefinition geometry) {
            this.factory = WindowCounter.factory(geometry);
            this.sketch = new OverflowSketch(geometry);
            this.counterBytes = COUNTER_OVERHEAD_BYTES + arrayBytes(geometry);
        }

        boolean countsFor(LimitDefinition definition) {
            return this.sketch.countsFor(definition);
        }

        long weightOf(String key) {
            return this.counterBytes + KEY_OVERHEAD_BYTES + 2L * key.length();
        }

        /**
         * A new counter for {@code key}, unless the key has counts in the sketch (starting from zero
         * would forget them) or another thread created one first.
         * @return the counter this call created, or null
         */
        WindowCounter createIfSketchIsEmpty(StoredKey stored, long nowMillis) {
            WindowCounter[] created = new WindowCounter[1];
            this.sketch.whenEmptyFor(stored.key(), nowMillis, () -> stored.map().computeIfAbsent(stored.key(),
                    (ignored) -> created[0] = this.factory.apply(nowMillis)));
            return created[0];
        }

        /** Bytes of a counter's arrays: the ring of slot counts, or the log at its largest. */
        private static long arrayBytes(LimitDefinition geometry) {
            if (geometry.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) {
                return 16 + 8L * geometry.subWindows();
            }
            long entries = Math.max(8, Long.highestOneBit(Math.max(1, Math.min(geometry.limit(),
                    geometry.windowMillis())) * 2 - 1));
            return 2 * (16 + 8 * entries);
        }

    }

    /**
     * Where a key's counter is kept: the key itself in the map of short keys, or its digest in the
     * other ({@code isDigest}).
     */
    private record StoredKey(Map<String, WindowCounter> map, String key, boolean isDigest) {

        static StoredKey of(LimitCounters counters, String key) {
            return CounterKeys.fits(key) ? new StoredKey(counters.counters, key, false)
                    : new StoredKey(counters.digests, CounterKeys.digest(key), true);
        }

    }

}
