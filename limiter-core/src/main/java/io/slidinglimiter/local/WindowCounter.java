package io.slidinglimiter.local;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.Decisions;

/**
 * The permits one key has used in one limit's window. Check and increment are one atomic step:
 * a call is admitted when {@code used + cost <= limit}, and a rejected call consumes nothing.
 * <p>
 * The limit is passed to every decision rather than held, so a limit changed at run time applies
 * on the next decision and keeps the counts. Times come from the caller (read once per decision);
 * a time older than one already seen, as when two threads read the clock in one order and take the
 * lock in the other, is counted at the newest time seen: never undercounted.
 * <p>
 * A decision holds the counter's monitor for the few field updates it makes; nothing else runs
 * under it. (A monitor, not a {@code ReentrantLock}: it spins briefly before parking when two
 * threads meet on one key, and it costs no object of its own.) The sliding window counter decides
 * without it while time stays within one slot, and takes it for everything else.
 * <p>
 * A store that forgets idle counters {@linkplain #retireIfEmpty(long) retires} them first: a
 * retired counter decides nothing more (its methods return null), so a caller that looked it up
 * just before it was dropped looks the key up again instead of counting where nobody will look.
 * <p>
 * Retry-after and reset times are never longer than the window, even when the clock passed in
 * steps back.
 */
abstract sealed class WindowCounter permits SlidingWindowCounter, SlidingLog, SketchedCounter {

    /** Taken first by an all-or-nothing decision whose monitors do not all have distinct identity hashes. */
    private static final Object TIE_BREAKER = new Object();

    /** What {@link #acquire} returns for a retired counter. */
    public static final long RETIRED = Long.MIN_VALUE;

    /**
     * The time of the first permit counted since the last {@link #reset} ({@link Long#MAX_VALUE}
     * while none is): permits admitted before it were forgotten, so a refund of them gives nothing
     * back. As in Redis, where a reset deletes the key and the next permit counted makes it anew,
     * stamped with its time. Guarded by the monitor.
     */
    private long countedSinceMillis = Long.MIN_VALUE;

    /**
     * The backend's generation when this counter was made or last {@link #reset}: a decision of an
     * earlier generation counted in a counter that was reset since (or in one dropped by a reset of
     * every key), so its refund gives nothing back, even in the reset's millisecond. Set before the
     * counter is shared, then guarded by the monitor.
     */
    private long generation;

    /**
     * Creates empty counters for a definition, a sliding window counter or a sliding log as it says,
     * that share what they can (the window's shape): for a store that holds many counters of one limit.
     * @param definition the limit's definition
     * @return a function from the current time to a new counter
     */
    public static LongFunction<WindowCounter> factory(LimitDefinition definition) {
        return factory(definition, CounterMemory.UNBOUNDED);
    }

    /**
     * Creates empty counters for a definition, as {@link #factory(LimitDefinition)} does, whose growth
     * (a sliding log's entries) takes room from {@code memory}.
     * @param definition the limit's definition
     * @param memory the room counters grow into
     * @return a function from the current time to a new counter
     */
    public static LongFunction<WindowCounter> factory(LimitDefinition definition, CounterMemory memory) {
        return switch (definition.algorithm()) {
            case SLIDING_WINDOW_COUNTER -> {
                SlidingWindowCounter.Geometry geometry = new SlidingWindowCounter.Geometry(definition.windowMillis(),
                        definition.subWindows());
                yield (nowMillis) -> new SlidingWindowCounter(geometry, nowMillis);
            }
            case SLIDING_LOG -> (nowMillis) -> new SlidingLog(definition.windowMillis(), memory);
        };
    }

    /**
     * The bytes a counter of {@code definition} takes for its arrays when new: the ring of slot
     * counts, or a sliding log's first entries (it takes more from its {@link CounterMemory} as it
     * grows; see {@link #extraBytes()}).
     * @param definition the limit's definition
     * @return the bytes of its arrays
     */
    public static long initialArrayBytes(LimitDefinition definition) {
        return switch (definition.algorithm()) {
            case SLIDING_WINDOW_COUNTER -> 16 + 8L * definition.subWindows();
            case SLIDING_LOG -> 2 * (16 + SlidingLog.ENTRY_BYTES / 2 * SlidingLog.INITIAL_CAPACITY);
        };
    }

    /**
     * The bytes this counter took from its {@link CounterMemory} beyond {@link #initialArrayBytes}.
     * Stable once the counter is retired.
     * @return the bytes it grew by
     */
    public long extraBytes() {
        synchronized (monitor()) {
            return grownBytes();
        }
    }

    /**
     * The window length this counter counts over.
     * @return the window in milliseconds
     */
    public abstract long windowMillis();

    /**
     * Whether this counter counts the way {@code definition} asks (same algorithm, window and
     * sub-windows), so that it may keep counting for it.
     * @param definition a limit's definition
     * @return {@code true} if this counter can serve the definition
     */
    public abstract boolean countsFor(LimitDefinition definition);

    /**
     * Admits {@code cost} permits if they fit under {@code limit}, atomically.
     * @param nowMillis the current time
     * @param cost the permits this call takes, between 1 and {@code limit}
     * @param limit the permits per window
     * @return the decision; null if this counter was retired (look the key up again)
     * @throws IllegalArgumentException if {@code cost} is not between 1 and {@code limit}
     */
    public Decision tryAcquire(long nowMillis, long cost, long limit) {
        checkCost(cost, limit);
        return tryAcquireLocked(nowMillis, cost, limit);
    }

    /**
     * The allocation-free form of {@link #tryAcquire}: admits {@code cost} permits if they fit
     * under {@code limit}, atomically, and answers with one number.
     * @param nowMillis the current time
     * @param cost the permits this call takes, between 1 and {@code limit}
     * @param limit the permits per window
     * @return when admitted, the permits that remain (zero or more); when rejected, minus the time
     * until the same cost would fit ({@code -retryAfterMillis}, at most -1); {@link #RETIRED} if this
     * counter was retired
     * @throws IllegalArgumentException if {@code cost} is not between 1 and {@code limit}
     */
    public long acquire(long nowMillis, long cost, long limit) {
        checkCost(cost, limit);
        return outcome(tryAcquireLocked(nowMillis, cost, limit));
    }

    static long outcome(Decision decision) {
        if (decision == null) {
            return RETIRED;
        }
        return decision.allowed() ? decision.remaining() : -decision.retryAfterMillis();
    }

    final Decision tryAcquireLocked(long nowMillis, long cost, long limit) {
        synchronized (monitor()) {
            if (retired()) {
                return null;
            }
            advance(nowMillis);
            long retryAfterMillis = retryAfterMillis(nowMillis, cost, limit);
            if (retryAfterMillis == 0) {
                count(nowMillis, cost);
            }
            Decision decision = decision(nowMillis, limit, retryAfterMillis);
            publish();
            return decision;
        }
    }

    /**
     * What a call of cost 1 would be told now, without consuming anything.
     * @param nowMillis the current time
     * @param limit the permits per window
     * @return the decision a call of cost 1 would get; null if this counter was retired
     */
    public final Decision peek(long nowMillis, long limit) {
        KeyUsage usage = usage(nowMillis, limit);
        return (usage != null) ? usage.decision() : null;
    }

    /**
     * What a call of cost 1 would be told now, and the permits counted, without consuming anything.
     * @param nowMillis the current time
     * @param limit the permits per window
     * @return the usage; null if this counter was retired
     */
    public final KeyUsage usage(long nowMillis, long limit) {
        return usage(nowMillis, limit, 1);
    }

    /**
     * What a call of {@code cost} would be told now, and the permits counted, without consuming anything.
     * @param nowMillis the current time
     * @param limit the permits per window
     * @param cost the permits the call would ask, between 1 and the limit
     * @return the usage; null if this counter was retired
     */
    public final KeyUsage usage(long nowMillis, long limit, long cost) {
        checkCost(cost, limit);
        synchronized (monitor()) {
            if (retired()) {
                return null;
            }
            advance(nowMillis);
            Decision decision = decision(nowMillis, limit, retryAfterMillis(nowMillis, cost, limit));
            long used = used();
            publish();
            return new KeyUsage(used, decision);
        }
    }

    /**
     * Retires this counter if it holds no permit at {@code nowMillis}: it then decides nothing more,
     * and the store that holds it may drop it without losing a count.
     * @param nowMillis the current time
     * @return whether the counter is retired (now or before)
     */
    public final boolean retireIfEmpty(long nowMillis) {
        synchronized (monitor()) {
            if (!retired()) {
                advance(nowMillis);
                if (used() == 0) {
                    retire();
                }
                else {
                    publish();
                }
            }
            return retired();
        }
    }

    /**
     * Gives back {@code cost} permits admitted at {@code acquiredAtMillis} by a decision of
     * {@code decidedInGeneration}, if they are still in the window and this counter was neither made
     * nor reset after that generation.
     * @param nowMillis the current time
     * @param acquiredAtMillis when they were admitted
     * @param decidedInGeneration the backend's generation at the decision ({@link Decisions#generation()}),
     * or 0 when unknown: then the time alone tells
     * @param cost how many
     */
    public final void refund(long nowMillis, long acquiredAtMillis, long decidedInGeneration, long cost) {
        synchronized (monitor()) {
            if (!retired()) {
                advance(nowMillis);
                boolean sameGeneration = decidedInGeneration == 0 || decidedInGeneration >= this.generation;
                if (sameGeneration && acquiredAtMillis >= this.countedSinceMillis
                        && acquiredAtMillis > nowMillis - windowMillis()) {
                    remove(acquiredAtMillis, cost);
                }
                publish();
            }
        }
    }

    /**
     * Counts {@code permits} more now, whether or not they fit: a call charged after it ran for more
     * than it was admitted for. The count may pass the limit; later calls then wait until enough of
     * it has left the window.
     * @param nowMillis the current time
     * @param permits how many, at least 1
     * @return false if this counter was retired (look the key up again), else true
     */
    public final boolean charge(long nowMillis, long permits) {
        synchronized (monitor()) {
            if (retired()) {
                return false;
            }
            advance(nowMillis);
            count(nowMillis, permits);
            publish();
            return true;
        }
    }

    /**
     * Forgets every counted permit and enters a new generation: a later refund of a decision of an
     * earlier one, or of a permit admitted before the next one counted, gives nothing back.
     * @param nowMillis the current time
     * @param newGeneration the backend's generation from now on, greater than any a decision was given
     */
    public final void reset(long nowMillis, long newGeneration) {
        synchronized (monitor()) {
            if (!retired()) {
                advance(nowMillis);
                clear();
                this.countedSinceMillis = Long.MAX_VALUE;
                this.generation = newGeneration;
                publish();
            }
        }
    }

    /**
     * Sets the generation of a counter not yet shared: the backend's when it is made.
     * @param generation the backend's generation now
     * @return this counter
     */
    final WindowCounter startingAt(long generation) {
        this.generation = generation;
        return this;
    }

    /**
     * Retires this counter whatever it holds: for a store that drops every counter of a limit whose
     * window changed. A caller holding it looks the key up again.
     */
    public final void discard() {
        synchronized (monitor()) {
            if (!retired()) {
                retire();
            }
        }
    }

    /**
     * Admits each {@code costs[i]} into {@code counters[i]} under {@code limits[i]} only if every one
     * of them fits; otherwise consumes from none. The decisions come back in the order given; when the
     * call is rejected, each tells whether its own limit would have admitted it and what it holds.
     * @param nowMillis the current time
     * @param generation the backend's generation, read before the counters were looked up (0: none):
     * the decisions carry it, and a refund compares it with the counters'
     * @param counters distinct counters
     * @param costs the cost for each counter
     * @param limits the limit for each counter
     * @return the decisions, all-or-nothing; null if one of the counters was retired (look the keys up
     * again)
     * @throws IllegalArgumentException if a counter appears twice or a cost does not fit its limit
     */
    public static Decisions tryAcquireAll(long nowMillis, long generation, WindowCounter[] counters, long[] costs,
            long[] limits) {
        int count = counters.length;
        if (costs.length != count || limits.length != count) {
            throw new IllegalArgumentException("Expected one cost and one limit per counter");
        }
        for (int i = 0; i < count; i++) {
            checkCost(costs[i], limits[i]);
            for (int j = 0; j < i; j++) {
                if (counters[i].sameCountsAs(counters[j])) {
                    throw new IllegalArgumentException(
                            "The same counter appears twice in one decision: name each limit of a call once");
                }
            }
        }
        // Monitors are taken in the order of their identity hashes, so that two decisions cannot each
        // hold a monitor the other waits for. Distinct monitors with equal hashes have no order: a
        // decision that meets some takes the tie-breaker first, so two such decisions never overlap.
        WindowCounter[] lockOrder = counters.clone();
        Arrays.sort(lockOrder, Comparator.comparingInt((WindowCounter counter) -> identityOf(counter.monitor())));
        Supplier<Decisions> decide = () -> decideLocked(nowMillis, generation, counters, costs, limits);
        for (int i = 1; i < count; i++) {
            Object previous = lockOrder[i - 1].monitor();
            Object next = lockOrder[i].monitor();
            if (previous != next && identityOf(previous) == identityOf(next)) {
                synchronized (TIE_BREAKER) {
                    return lockedInOrder(lockOrder, 0, decide);
                }
            }
        }
        return lockedInOrder(lockOrder, 0, decide);
    }

    private static int identityOf(Object monitor) {
        return System.identityHashCode(monitor);
    }

    /** Runs {@code body} holding the monitors of {@code order} from {@code next} on, taken in order. */
    private static Decisions lockedInOrder(WindowCounter[] order, int next, Supplier<Decisions> body) {
        if (next == order.length) {
            return body.get();
        }
        synchronized (order[next].monitor()) {
            return lockedInOrder(order, next + 1, body);
        }
    }

    private static Decisions decideLocked(long nowMillis, long generation, WindowCounter[] counters, long[] costs,
            long[] limits) {
        int count = counters.length;
        for (WindowCounter counter : counters) {
            if (counter.retired()) {
                return null;
            }
        }
        long[] retryAfterMillis = new long[count];
        boolean allFit = true;
        for (int i = 0; i < count; i++) {
            counters[i].advance(nowMillis);
            retryAfterMillis[i] = counters[i].retryAfterMillis(nowMillis, costs[i], limits[i]);
            allFit &= retryAfterMillis[i] == 0;
        }
        List<Decision> decisions = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (allFit) {
                counters[i].count(nowMillis, costs[i]);
            }
            decisions.add(counters[i].decision(nowMillis, limits[i], retryAfterMillis[i]));
            counters[i].publish();
        }
        return new Decisions(allFit, List.copyOf(decisions), nowMillis, generation);
    }

    static void checkCost(long cost, long limit) {
        if (cost <= 0) {
            throw new IllegalArgumentException("cost must be greater than 0 but was " + cost);
        }
        if (cost > limit) {
            throw new IllegalArgumentException("cost " + cost + " exceeds the limit of " + limit
                    + " permits per window: such a call could never be admitted");
        }
    }

    /** The decision as of {@code nowMillis}; waits are capped at the window for a clock that stepped back. */
    private Decision decision(long nowMillis, long limit, long retryAfterMillis) {
        long remaining = Math.max(0, limit - used());
        return new Decision(retryAfterMillis == 0, limit, remaining, Math.min(retryAfterMillis, windowMillis()),
                Math.min(resetAfterMillis(nowMillis), windowMillis()));
    }

    /** What decisions synchronize on: the counter itself, or the sketch it is a view of. */
    Object monitor() {
        return this;
    }

    /** Whether {@code other} counts the same permits: the same counter, or a view of the same key. */
    boolean sameCountsAs(WindowCounter other) {
        return this == other;
    }

    /** Bytes grown beyond the initial arrays; under the monitor. */
    long grownBytes() {
        return 0;
    }

    // The methods below run with the monitor held.

    /** Whether this counter decides nothing more. */
    abstract boolean retired();

    /** Makes this counter decide nothing more; called when it holds nothing. */
    abstract void retire();

    /** Makes the state left by a locked section visible to decisions that take no lock; nothing by default. */
    void publish() {
    }

    /** Moves the window up to {@code nowMillis}, dropping the permits that expired. */
    abstract void advance(long nowMillis);

    /** Permits counted in the window as of the last {@link #advance}. */
    abstract long used();

    /** Zero when {@code cost} fits now; else the exact time until enough permits expire for it to fit. */
    abstract long retryAfterMillis(long nowMillis, long cost, long limit);

    /** Counts {@code cost} permits at the current time. */
    abstract void add(long nowMillis, long cost);

    /** Adds permits, noting the first counted since a reset. Called holding the monitor. */
    private void count(long nowMillis, long cost) {
        if (this.countedSinceMillis == Long.MAX_VALUE) {
            this.countedSinceMillis = nowMillis;
        }
        add(nowMillis, cost);
    }

    /**
     * Whether nothing was counted since a reset: until something is, a counter that admits without
     * the monitor must not, so that the first permit counted notes its time. Called holding the monitor.
     * @return whether the first permit since a reset is still to be counted
     */
    final boolean awaitsFirstCount() {
        return this.countedSinceMillis == Long.MAX_VALUE;
    }

    /** Uncounts up to {@code cost} permits counted at {@code acquiredAtMillis}, if still held. */
    abstract void remove(long acquiredAtMillis, long cost);

    /** The time until every counted permit has expired; zero when none is counted. */
    abstract long resetAfterMillis(long nowMillis);

    abstract void clear();

}
