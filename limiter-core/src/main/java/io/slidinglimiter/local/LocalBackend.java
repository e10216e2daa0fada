package io.slidinglimiter.local;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

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
 * {@value #SCHEDULED_SWEEP_MILLIS} ms by a daemon thread that all backends share, so a flood's
 * counters go soon after their window, whether or not new keys arrive. The default bound on bytes
 * follows the heap ({@link #defaultMaxBytes()}).
 * <p>
 * <b>When the bound is reached</b> by counters that all hold permits (a flood of keys), a new key
 * is decided through its limit's {@link OverflowSketch}, which can only over-estimate. No flood,
 * in any limit, lets a key be admitted more than its limit per window, and a flood in one limit
 * never drops another limit's counters. What a flood costs is false rejections of new keys of the
 * flooded limit while it lasts, and of other limits' new keys only while the shared bound is full.
 * The sketch is sized to the flood it must absorb ({@code overflowKeys} new keys per window): up to
 * that, under 1 % of new keys are falsely refused. Such decisions are counted ({@link #overflowDecisions()}).
 * <p>
 * <b>Limits changed at run time.</b> The definition passed to each call applies: a new
 * {@code limit} keeps the counts; a new window, number of sub-windows or algorithm starts fresh
 * counters for that limit.
 */
public class LocalBackend implements RateLimitBackend {

    /** The default bound on live counters. */
    public static final long DEFAULT_MAX_KEYS = 1_000_000;

    /** The most the default bound on the estimated bytes of live counters takes: 256 MB. */
    public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;

    /** The share of the JVM's maximum heap the default bound on counters' bytes takes, at most {@link #DEFAULT_MAX_BYTES}. */
    public static final double DEFAULT_HEAP_SHARE = 0.10;

    /**
     * The estimated bytes of a typical counter (ten sub-windows, a short key), by which the default
     * overflow capacity is the number of counters the byte bound holds.
     */
    static final long TYPICAL_COUNTER_BYTES = 320;

    /** How often counters that hold nothing are dropped while the bounds leave room. */
    private static final long IDLE_SWEEP_MILLIS = 60_000;

    /**
     * How often, in real time, a backend drops the counters that hold nothing, whether or not
     * new keys arrive: after a flood, its counters go once their window has passed.
     */
    static final long SCHEDULED_SWEEP_MILLIS = 10_000;

    /** One daemon thread sweeps every backend on its schedule; a backend left unclosed is still collected. */
    private static final ScheduledExecutorService SWEEPER = Executors.newSingleThreadScheduledExecutor((task) -> {
        Thread thread = new Thread(task, "limiter-local-sweeper");
        thread.setDaemon(true);
        return thread;
    });

    /** How often at most a full store looks for counters that hold nothing. */
    private static final long FULL_SWEEP_MILLIS = 1_000;

    /** The most limits whose counters are found without a map look-up. */
    private static final int MAX_NEAR = 8;

    private final TimeSource timeSource;

    /** This backend's use of its clock, which keeps the ticking clock's thread running until {@link #close()}. */
    private final TimeSource.Registration clockRegistration;


    private final Map<String, LimitCounters> limits = new ConcurrentHashMap<>();

    /**
     * The counters of the first {@value #MAX_NEAR} limits created, also in {@link #limits}: found by
     * the identity of the limit's name, without a map look-up. Copied on write, under
     * {@link #nearLock}; a limit's counters leave it before they are drained.
     */
    private volatile LimitCounters[] near = new LimitCounters[0];

    private final Object nearLock = new Object();

    /** The live counters and their estimated bytes, within the bounds. */
    private final CounterBudget budget;

    private final LongAdder overflowDecisions = new LongAdder();

    /**
     * Resets so far: each decision carries the value it read before looking its counters up, each
     * counter the value of its making or last reset, so that a refund of a decision made before a
     * reset gives nothing back, even within the reset's millisecond.
     */
    private final AtomicLong generation = new AtomicLong(1);

    private final ReentrantLock sweepLock = new ReentrantLock();

    private final long maxKeys;

    private final long maxBytes;

    /** The new keys per window each limit's overflow sketch absorbs with few false refusals. */
    private final long overflowKeys;

    /** This backend's turn on the sweeper's schedule, cancelled by {@link #close()}. */
    private final ScheduledFuture<?> scheduledSweep;

    private volatile long nextIdleSweepMillis;

    private volatile long nextFullSweepMillis;

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
     * Creates a backend whose overflow absorbs as many new keys per window as its bounds hold counters.
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
        this(timeSource, maxKeys, maxBytes, overflowKeys, SCHEDULED_SWEEP_MILLIS);
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
        this.maxKeys = maxKeys;
        this.maxBytes = maxBytes;
        this.overflowKeys = overflowKeys;
        long now = timeSource.currentTimeMillis();
        this.nextIdleSweepMillis = now + IDLE_SWEEP_MILLIS;
        WeakReference<LocalBackend> self = new WeakReference<>(this);
        ScheduledFuture<?>[] turn = new ScheduledFuture<?>[1];
        turn[0] = SWEEPER.scheduleWithFixedDelay(() -> {
            LocalBackend backend = self.get();
            if (backend == null) {
                turn[0].cancel(false);
                return;
            }
            backend.sweep(backend.timeSource.currentTimeMillis(), false);
        }, sweepPeriodMillis, sweepPeriodMillis, TimeUnit.MILLISECONDS);
        this.scheduledSweep = turn[0];
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
     * The default overflow capacity: as many new keys per window as the bounds hold counters of a
     * typical limit.
     * @param maxKeys the bound on counters
     * @param maxBytes the bound on their estimated bytes
     * @return the new keys per window each limit's overflow absorbs
     */
    public static long defaultOverflowKeys(long maxKeys, long maxBytes) {
        return Math.max(1, Math.min(maxKeys, maxBytes / TYPICAL_COUNTER_BYTES));
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

    /** {@inheritDoc} Allocates nothing on a sliding window counter: its answer is one number. */
    @Override
    public boolean admit(LimitDefinition limit, String key, long cost) {
        LimitRequest.checkCost(limit, cost);
        long nowMillis = this.timeSource.currentTimeMillis();
        while (true) {
            long outcome = counterFor(limit, key, nowMillis).acquire(nowMillis, cost, limit.limit());
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
                counters[i] = counterFor(requests.get(i).limit(), requests.get(i).key(), nowMillis);
            }
            Decisions decisions = WindowCounter.tryAcquireAll(nowMillis, generation, counters, costs, limits);
            if (decisions != null) {
                return decisions;
            }
        }
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
            WindowCounter counter = existingCounter(request.limit(), request.key());
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
                WindowCounter counter = existingCounter(request.limit(), request.key());
                if (counter != null) {
                    counter.refund(nowMillis, taken.decidedAtMillis(), taken.generation(), -difference);
                }
            }
            else if (difference > 0) {
                while (!counterFor(request.limit(), request.key(), nowMillis).charge(nowMillis, difference)) {
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
        LimitRequest.check(limit, key, 1);
        long nowMillis = this.timeSource.currentTimeMillis();
        LimitCounters counters = this.limits.get(limit.name());
        if (counters == null || !counters.countsFor(limit)) {
            return new KeyUsage(0, new Decision(true, limit.limit(), limit.limit(), 0, 0));
        }
        StoredKey stored = StoredKey.of(counters, key);
        WindowCounter counter = stored.map().get(stored.key());
        KeyUsage usage = (counter != null) ? counter.usage(nowMillis, limit.limit()) : null;
        return (usage != null) ? usage
                : counters.sketch.counterFor(stored.key(), stored.isDigest(), () -> false).usage(nowMillis,
                        limit.limit());
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
        WindowCounter counter = existingCounter(limit, key);
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
        this.limits.forEach((name, counters) -> {
            if (this.limits.remove(name, counters)) {
                drain(counters);
            }
        });
    }

    /** Never: decisions are made in memory, without a lock held across I/O. */
    @Override
    public boolean mayBlock() {
        return false;
    }

    /** Stops using the clock (the ticking clock's thread ends when no backend uses it) and leaves the sweeper's schedule. */
    @Override
    public void close() {
        this.scheduledSweep.cancel(false);
        this.clockRegistration.close();
    }

    /**
     * The number of counters held now, after dropping those that hold nothing.
     * @return the live counter count
     */
    public long liveCounters() {
        sweep(this.timeSource.currentTimeMillis(), true);
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
        return Math.min(1.0, Math.max((double) this.budget.liveCounters() / this.maxKeys,
                (double) this.budget.liveBytes() / this.maxBytes));
    }

    /**
     * The bytes the overflow sketches of the limits that overflowed take.
     * @return the bytes, 0 while no limit overflowed
     */
    public long overflowBytes() {
        long bytes = 0;
        for (LimitCounters counters : this.limits.values()) {
            bytes += counters.sketch.bytes();
        }
        return bytes;
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
        return this.overflowDecisions.sum();
    }

    /**
     * The key's own counter, if it has one of the definition's shape; never creates one. (After a
     * window change the counters are new: permits taken before it are not in them to give back.)
     */
    private WindowCounter existingCounter(LimitDefinition limit, String key) {
        LimitCounters counters = this.limits.get(limit.name());
        if (counters == null || !counters.countsFor(limit)) {
            return null;
        }
        StoredKey stored = StoredKey.of(counters, key);
        return stored.map().get(stored.key());
    }

    private WindowCounter counterFor(LimitDefinition limit, String key, long nowMillis) {
        while (true) {
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
                WindowCounter created = counters.createIfSketchIsEmpty(stored, nowMillis, this.generation.get());
                if (created != null) {
                    return created;
                }
                this.budget.releaseCounter(weight);
                if (counters.isDrained()) {
                    // The limit's window changed meanwhile: its new counters are elsewhere.
                    continue;
                }
                WindowCounter raced = stored.map().get(stored.key());
                if (raced != null) {
                    return raced;
                }
            }
            this.overflowDecisions.increment();
            return counters.sketch.counterFor(stored.key(), stored.isDigest(),
                    () -> stored.map().get(stored.key()) != null || counters.isDrained());
        }
    }

    /**
     * A limit's counters: first among the near ones, where a definition that holds the same name
     * object (as the registry's definitions of a limit and of its plans do) and counts the same
     * window finds them by a reference comparison; else through the map, which repeated the
     * registry's look-up and took about a quarter of a decision (BENCHMARKS.md, third pass).
     */
    private LimitCounters countersOf(LimitDefinition limit) {
        String name = limit.name();
        for (LimitCounters near : this.near) {
            if (near.name == name && near.countsFor(limit)) {
                return near;
            }
        }
        LimitCounters counters = this.limits.get(name);
        if (counters != null && counters.countsFor(limit)) {
            return counters;
        }
        LimitCounters[] replacedAndCreated = new LimitCounters[2];
        LimitCounters current = this.limits.compute(name, (key, existing) -> {
            if (existing != null && existing.countsFor(limit)) {
                return existing;
            }
            replacedAndCreated[0] = existing;
            replacedAndCreated[1] = new LimitCounters(limit, this.budget, this.overflowKeys);
            return replacedAndCreated[1];
        });
        if (replacedAndCreated[0] != null) {
            drain(replacedAndCreated[0]);
        }
        if (replacedAndCreated[1] != null) {
            keepNear(replacedAndCreated[1]);
        }
        return current;
    }

    /** Lists new counters among the near ones while there is room, unless they were drained already. */
    private void keepNear(LimitCounters counters) {
        synchronized (this.nearLock) {
            LimitCounters[] near = this.near;
            if (!counters.leftNear && near.length < MAX_NEAR) {
                LimitCounters[] more = Arrays.copyOf(near, near.length + 1);
                more[near.length] = counters;
                this.near = more;
            }
        }
    }

    /** Takes counters out of the near ones for good, before they are drained. */
    private void leaveNear(LimitCounters counters) {
        synchronized (this.nearLock) {
            counters.leftNear = true;
            this.near = Arrays.stream(this.near).filter((near) -> near != counters).toArray(LimitCounters[]::new);
        }
    }

    /**
     * Drops every counter of a limit whose window changed, giving back their room. No counter can be
     * added to it afterwards, and a caller that holds one of them looks its key up again.
     */
    private void drain(LimitCounters counters) {
        leaveNear(counters);
        counters.markDrained();
        for (Map<String, WindowCounter> map : List.of(counters.counters, counters.digests)) {
            map.forEach((key, counter) -> {
                counter.discard();
                if (map.remove(key, counter)) {
                    this.budget.releaseCounter(counters.weightOf(key) + counter.extraBytes());
                }
            });
        }
    }

    /** Takes room for one counter of {@code weight} bytes, dropping empty counters if needed. */
    private boolean reserve(long weight, long nowMillis) {
        if (nowMillis >= this.nextIdleSweepMillis) {
            sweep(nowMillis, false);
        }
        if (this.budget.tryAddCounter(weight)) {
            return true;
        }
        if (nowMillis >= this.nextFullSweepMillis) {
            sweep(nowMillis, false);
            return this.budget.tryAddCounter(weight);
        }
        return false;
    }

    /**
     * Drops the counters that hold nothing; one thread at a time, the others go on deciding. Also the
     * sweeper's scheduled turn, so that counters a flood left go once their window has passed.
     */
    void sweep(long nowMillis, boolean wait) {
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
                            this.budget.releaseCounter(counters.weightOf(key) + counter.extraBytes());
                        }
                    });
                }
            }
        }
        finally {
            this.sweepLock.unlock();
        }
    }

}
