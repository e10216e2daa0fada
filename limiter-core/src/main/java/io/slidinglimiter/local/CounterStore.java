package io.slidinglimiter.local;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.TimeSource;

/**
 * Where the local backend keeps its counters.
 * <p>
 * One per limit and key within the bounds, the limit's
 * overflow sketch past them. Finds a key's counter (the first limits' without a map look-up),
 * makes one when there is room, and drops a limit's counters when its window changes.
 */
final class CounterStore implements AutoCloseable {

    /** The most limits whose counters are found without a map look-up. */
    private static final int MAX_NEAR = 8;

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

    /** The backend's generation, which a counter made now starts at. */
    private final AtomicLong generation;

    /** The new keys per window each limit's overflow sketch absorbs. */
    private final long overflowKeys;

    private final LongAdder overflowDecisions = new LongAdder();

    /** Drops the counters that hold nothing. */
    private final IdleCounters idle;

    /**
     * @param budget the bounds
     * @param generation the backend's generation
     * @param overflowKeys the new keys per window each limit's overflow sketch absorbs
     * @param timeSource the backend's clock
     * @param sweepPeriodMillis how often, in real time, counters that hold nothing are dropped
     */
    CounterStore(CounterBudget budget, AtomicLong generation, long overflowKeys, TimeSource timeSource,
            long sweepPeriodMillis) {
        this.budget = budget;
        this.generation = generation;
        this.overflowKeys = overflowKeys;
        this.idle = new IdleCounters(this.limits, budget, timeSource, sweepPeriodMillis);
    }

    /** What a key holds now, for a call of {@code cost}, read without making a counter; an unknown key holds nothing. */
    KeyUsage usage(LimitDefinition limit, String key, long cost, long nowMillis) {
        LimitCounters counters = this.limits.get(limit.name());
        if (counters == null || !counters.countsFor(limit)) {
            return new KeyUsage(0, new Decision(true, limit.limit(), limit.limit(), 0, 0));
        }
        StoredKey stored = StoredKey.of(counters, key);
        WindowCounter counter = stored.map().get(stored.key());
        KeyUsage usage = (counter != null) ? counter.usage(nowMillis, limit.limit(), cost) : null;
        return (usage != null) ? usage
                : counters.sketch.counterFor(stored.key(), stored.isDigest(), () -> false).usage(nowMillis,
                        limit.limit(), cost);
    }

    /** Drops every limit's counters and overflow sketch, giving their room back. */
    void dropAll() {
        this.limits.forEach((name, counters) -> {
            if (this.limits.remove(name, counters)) {
                drain(counters);
            }
        });
    }

    /** Drops the counters that hold nothing now, waiting for a sweep under way. */
    void sweep(long nowMillis) {
        this.idle.sweep(nowMillis, true);
    }

    /** @return decisions taken through an overflow sketch since start */
    long overflowDecisions() {
        return this.overflowDecisions.sum();
    }

    /** @return the bytes the overflow sketches of the limits that overflowed take */
    long overflowBytes() {
        long bytes = 0;
        for (LimitCounters counters : this.limits.values()) {
            bytes += counters.sketch.bytes();
        }
        return bytes;
    }

    @Override
    public void close() {
        this.idle.close();
    }

    /**
     * The key's own counter, if it has one of the definition's shape; never creates one. (After a
     * window change the counters are new: permits taken before it are not in them to give back.)
     */
    WindowCounter existingCounter(LimitDefinition limit, String key) {
        LimitCounters counters = this.limits.get(limit.name());
        if (counters == null || !counters.countsFor(limit)) {
            return null;
        }
        StoredKey stored = StoredKey.of(counters, key);
        return stored.map().get(stored.key());
    }

    /**
     * The counter a decision of {@code key} counts in: its own, made now if the bounds leave room
     * (and the key holds nothing in the sketch); else a view of the limit's overflow sketch.
     */
    WindowCounter counterFor(LimitDefinition limit, String key, long nowMillis) {
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
            if (this.idle.reserve(weight, nowMillis)) {
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

}
