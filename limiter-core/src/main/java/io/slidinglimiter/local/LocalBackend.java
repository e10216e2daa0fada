package io.slidinglimiter.local;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.slidinglimiter.Decision;
import io.slidinglimiter.internal.CounterKeys;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;

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
 * forgetting a count would let its key be admitted again. Such counters are also dropped every
 * {@value IdleCounters#SCHEDULED_SWEEP_MILLIS} ms by a daemon thread that all backends share, so a flood's
 * counters go soon after their window, whether or not new keys arrive. The default bound on bytes
 * follows the heap ({@link #defaultMaxBytes()}).
 * <p>
 * <b>When the bound is reached</b> by counters that all hold permits (a flood of keys), a new key
 * is decided through its limit's {@link OverflowSketch}, which can only over-estimate. No flood,
 * in any limit, lets a key be admitted more than its limit per window, and a flood in one limit
 * never drops another limit's counters. What a flood costs is false rejections of new keys of the
 * flooded limit while it lasts, and of other limits' new keys only while the shared bound is full.
 * The sketch is sized to the flood it must absorb ({@code overflowKeys} new keys per window, by default
 * ten times what the bounds hold): up to that, under 1 % of new keys are falsely refused, in about the
 * memory the bound's own counters take. Such decisions are counted ({@link #overflowDecisions()}).
 * <p>
 * <b>Limits changed at run time.</b> The definition passed to each call applies: a new
 * {@code limit} keeps the counts; a new window, number of sub-windows or algorithm starts fresh
 * counters for that limit.
 */
public class LocalBackend implements RateLimitBackend {

    /** The default bound on live counters. */
    public static final long DEFAULT_MAX_KEYS = 1_000_000;

    /**
     * The largest limit the local counters count, as every backend does (2^53): counts, costs and
     * charges summed in a window stay far inside a {@code long}, so that none wraps.
     */
    public static final long MAX_LIMIT = 1L << 53;

    /** The most the default bound on the estimated bytes of live counters takes: 256 MB. */
    public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;

    /** The share of the maximum heap the default bound on counters' bytes takes, at most {@link #DEFAULT_MAX_BYTES}. */
    public static final double DEFAULT_HEAP_SHARE = 0.10;

    /**
     * The estimated bytes of a typical counter (ten sub-windows, a short key), by which the default
     * overflow capacity is the number of counters the byte bound holds.
     */
    static final long TYPICAL_COUNTER_BYTES = 320;

    /** How many times the bound's counters, in new keys per window, the overflow absorbs by default. */
    static final long FLOOD_TIMES_BOUND = 10;

    private final TimeSource timeSource;

    /** This backend's use of its clock, which keeps the ticking clock's thread running until {@link #close()}. */
    private final TimeSource.Registration clockRegistration;

    /** The counters, by limit and key. */
    private final CounterStore store;

    /** The live counters and their estimated bytes, within the bounds. */
    private final CounterBudget budget;

    /**
     * Resets so far: each decision carries the value it read before looking its counters up, each
     * counter the value of its making or last reset, so that a refund of a decision made before a
     * reset gives nothing back, even within the reset's millisecond.
     */
    private final AtomicLong generation = new AtomicLong(1);

    /** The new keys per window each limit's overflow sketch absorbs with few false refusals. */
    private final long overflowKeys;

    /**
     * Creates a backend on the ticking monotonic clock ({@link TimeSource#ticking()}) with the default bounds.
     */
    public LocalBackend() {
        this(TimeSource.ticking(), DEFAULT_MAX_KEYS);
    }

    /**
     * Creates a backend with the default bound on bytes ({@link #defaultMaxBytes()}).
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     */
    public LocalBackend(TimeSource timeSource, long maxKeys) {
        this(timeSource, maxKeys, defaultMaxBytes());
    }

    /**
     * Creates a backend whose overflow absorbs ten times as many new keys per window as its bounds hold
     * counters.
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     * @param maxBytes the most estimated bytes of counters kept at once, greater than 0
     */
    public LocalBackend(TimeSource timeSource, long maxKeys, long maxBytes) {
        this(timeSource, maxKeys, maxBytes, defaultOverflowKeys(maxKeys, maxBytes));
    }

    /**
     * Creates a backend.
     * @param timeSource where time comes from
     * @param maxKeys the most counters kept at once, greater than 0
     * @param maxBytes the most estimated bytes of counters kept at once, greater than 0
     * @param overflowKeys the new keys per window that each limit's overflow absorbs, once the bounds
     * are full, with under 1 % of them falsely refused (limits of 3 or more); a limit that overflows
     * takes up to {@value OverflowSketch#BYTES_PER_KEY} bytes per key of it
     */
    public LocalBackend(TimeSource timeSource, long maxKeys, long maxBytes, long overflowKeys) {
        this(timeSource, maxKeys, maxBytes, overflowKeys, IdleCounters.SCHEDULED_SWEEP_MILLIS);
    }

    /** @param sweepPeriodMillis how often, in real time, the sweeper drops counters that hold nothing */
    LocalBackend(TimeSource timeSource, long maxKeys, long maxBytes, long overflowKeys, long sweepPeriodMillis) {
        if (maxKeys <= 0) {
            throw new IllegalArgumentException("max-keys must be greater than 0 but was " + maxKeys);
        }
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("max-memory must be greater than 0 but was " + maxBytes);
        }
        if (overflowKeys <= 0) {
            throw new IllegalArgumentException("overflow-keys must be greater than 0 but was " + overflowKeys);
        }
        this.timeSource = timeSource;
        this.clockRegistration = timeSource.register();
        this.budget = new CounterBudget(maxKeys, maxBytes);
        this.overflowKeys = overflowKeys;
        this.store = new CounterStore(this.budget, this.generation, overflowKeys, timeSource, sweepPeriodMillis);
    }

    /**
     * The default bound on the estimated bytes of live counters: {@value #DEFAULT_HEAP_SHARE} of the
     * JVM's maximum heap, at most {@link #DEFAULT_MAX_BYTES}, so that a flood of keys fills the bound,
     * not the heap.
     * @return the bytes
     */
    public static long defaultMaxBytes() {
        long heap = Runtime.getRuntime().maxMemory();
        long share = (heap == Long.MAX_VALUE) ? DEFAULT_MAX_BYTES : (long) (heap * DEFAULT_HEAP_SHARE);
        return Math.max(1L << 20, Math.min(DEFAULT_MAX_BYTES, share));
    }

    /**
     * The default overflow capacity: ten times as many new keys per window as the bounds hold counters
     * of a typical limit, which the sketch's cells ({@value OverflowSketch#BYTES_PER_KEY} bytes per key
     * at the most, 24 for a typical limit) hold in about the bound's own bytes.
     * @param maxKeys the bound on counters
     * @param maxBytes the bound on their estimated bytes
     * @return the new keys per window each limit's overflow absorbs
     */
    public static long defaultOverflowKeys(long maxKeys, long maxBytes) {
        return Math.max(1, FLOOD_TIMES_BOUND * Math.min(maxKeys, maxBytes / TYPICAL_COUNTER_BYTES));
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.checkCost(limit, cost);
        checkLimit(limit);
        long nowMillis = this.timeSource.currentTimeMillis();
        while (true) {
            Decision decision = this.store.counterFor(limit, key, nowMillis).tryAcquire(nowMillis, cost, limit.limit());
            if (decision != null) {
                return decision;
            }
        }
    }

    /** {@inheritDoc} Allocates nothing on a sliding window counter: its answer is one number. */
    @Override
    public boolean admit(LimitDefinition limit, String key, long cost) {
        LimitRequest.checkCost(limit, cost);
        checkLimit(limit);
        long nowMillis = this.timeSource.currentTimeMillis();
        while (true) {
            long outcome = this.store.counterFor(limit, key, nowMillis).acquire(nowMillis, cost, limit.limit());
            if (outcome != WindowCounter.RETIRED) {
                return outcome >= 0;
            }
        }
    }

    /**
     * {@inheritDoc} An admission allocates nothing, as {@link #admit}; a rejection, which changes
     * nothing, is decided once more for its numbers (and the call admitted if that one admits it).
     */
    @Override
    public Decision acquireOrReject(LimitDefinition limit, String key, long cost) {
        if (admit(limit, key, cost)) {
            return null;
        }
        Decision decision = tryAcquire(limit, key, cost);
        return decision.allowed() ? null : decision;
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        long nowMillis = this.timeSource.currentTimeMillis();
        long generation = this.generation.get();
        int count = requests.size();
        long[] costs = new long[count];
        long[] limits = new long[count];
        for (int i = 0; i < count; i++) {
            LimitRequest request = requests.get(i);
            checkLimit(request.limit());
            costs[i] = request.cost();
            limits[i] = request.limit().limit();
            for (int j = 0; j < i; j++) {
                if (request.limit().name().equals(requests.get(j).limit().name())
                        && request.key().equals(requests.get(j).key())) {
                    throw new IllegalArgumentException("Limit '" + request.limit().name()
                            + "' appears twice for one key in one decision: name each limit of a call once");
                }
            }
        }
        WindowCounter[] counters = new WindowCounter[count];
        while (true) {
            for (int i = 0; i < count; i++) {
                counters[i] = this.store.counterFor(requests.get(i).limit(), requests.get(i).key(), nowMillis);
            }
            Decisions decisions = WindowCounter.tryAcquireAll(nowMillis, generation, counters, costs, limits);
            if (decisions != null) {
                return decisions;
            }
        }
    }

    /**
     * Refuses a limit above {@link #MAX_LIMIT}, whose counts could wrap.
     * @param limit a limit's definition
     * @throws IllegalArgumentException when its limit is above {@link #MAX_LIMIT}
     */
    private static void checkLimit(LimitDefinition limit) {
        if (limit.limit() > MAX_LIMIT) {
            throw new IllegalArgumentException("Limit '" + limit.name() + "' is " + limit.limit()
                    + " permits, but the local backend counts at most " + MAX_LIMIT + " (2^53)");
        }
    }

    /** {@value #MAX_LIMIT}: far inside the {@code long} every count is held in. */
    @Override
    public long largestLimit(LimitDefinition limit) {
        return MAX_LIMIT;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Only keys with a counter of their own are refunded: a key decided through the overflow sketch
     * shares its cells with other keys, so its permits stay counted until they leave the window (an
     * over-count, never an under-count), and a key without a counter gets none.
     */
    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        long nowMillis = this.timeSource.currentTimeMillis();
        for (LimitRequest request : requests) {
            WindowCounter counter = this.store.existingCounter(request.limit(), request.key());
            if (counter != null) {
                counter.refund(nowMillis, taken.decidedAtMillis(), taken.generation(), request.cost());
            }
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Each settle is one atomic step on the key's counter. A key decided through the overflow sketch
     * is charged more like any other, but given nothing back (as for {@link #refund}).
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        long nowMillis = this.timeSource.currentTimeMillis();
        for (int i = 0; i < requests.size(); i++) {
            LimitRequest request = requests.get(i);
            long difference = charges[i] - request.cost();
            if (difference < 0) {
                WindowCounter counter = this.store.existingCounter(request.limit(), request.key());
                if (counter != null) {
                    counter.refund(nowMillis, taken.decidedAtMillis(), taken.generation(), -difference);
                }
            }
            else if (difference > 0) {
                while (!this.store.counterFor(request.limit(), request.key(), nowMillis).charge(nowMillis,
                        difference)) {
                    // Retired as it was looked up: look again.
                }
            }
        }
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return usage(limit, key).decision();
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        return usage(limit, key, 1);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        return this.store.usage(limit, key, cost, this.timeSource.currentTimeMillis());
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
        WindowCounter counter = this.store.existingCounter(limit, key);
        if (counter != null) {
            counter.reset(this.timeSource.currentTimeMillis(), this.generation.incrementAndGet());
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Every limit's counters and overflow sketch are dropped and their room given back; a caller
     * holding one of them looks its key up again.
     */
    @Override
    public void resetAll() {
        // Counters made from now on are of a generation no earlier decision was given.
        this.generation.incrementAndGet();
        this.store.dropAll();
    }

    /** Never: decisions are made in memory, without a lock held across I/O. */
    @Override
    public boolean mayBlock() {
        return false;
    }

    /** Stops using the clock (its ticking thread ends when no backend uses it) and leaves the sweeper's schedule. */
    @Override
    public void close() {
        this.store.close();
        this.clockRegistration.close();
    }

    /**
     * The number of counters held now, after dropping those that hold nothing.
     * @return the live counter count
     */
    public long liveCounters() {
        this.store.sweep(this.timeSource.currentTimeMillis());
        return this.budget.liveCounters();
    }

    /**
     * The estimated bytes of the counters held now.
     * @return the estimate, at most {@code maxBytes}
     */
    public long liveBytes() {
        return this.budget.liveBytes();
    }

    /**
     * The counters held now, as last swept: a read for meters, which drops nothing.
     * @return the counters held
     */
    public long heldCounters() {
        return this.budget.liveCounters();
    }

    /**
     * How full the bounds are: the larger of the counters held against {@code maxKeys} and their
     * bytes against {@code maxBytes}. At 1, new keys are decided through the overflow sketch.
     * @return between 0 and 1
     */
    public double fill() {
        return this.budget.fill();
    }

    /**
     * The bytes the overflow sketches of the limits that overflowed take.
     * @return the bytes, 0 while no limit overflowed
     */
    public long overflowBytes() {
        return this.store.overflowBytes();
    }

    /** @return the new keys per window each limit's overflow sketch absorbs with few false refusals */
    public long overflowKeys() {
        return this.overflowKeys;
    }

    /**
     * How many decisions were taken through an overflow sketch because the bounds were full.
     * @return the count since start
     */
    public long overflowDecisions() {
        return this.store.overflowDecisions();
    }

}
