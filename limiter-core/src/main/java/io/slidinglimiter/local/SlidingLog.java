package io.slidinglimiter.local;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.Algorithm;

/**
 * The exact sliding log: the admission time of every permit still in the window, so that the
 * permits admitted in any {@code (t - W, t]} never exceed the limit.
 * <p>
 * Permits admitted in the same millisecond share one entry (time and count) in a ring buffer that
 * grows as needed; entries never outnumber the permits in the window, so memory is O(limit) per
 * key, and usually far less. A refund that empties an entry removes it, and the buffer shrinks
 * again when the window empties.
 * <p>
 * <b>A bounded store.</b> The buffer grows only with room from its {@link CounterMemory}. Without
 * room, the two oldest entries merge into one at the later time: their permits are then held a
 * little longer than they were admitted for, so the log may reject early, never admit past the limit.
 */
final class SlidingLog extends WindowCounter {

    /** Entries a new log has room for. */
    static final int INITIAL_CAPACITY = 8;

    /** Bytes one entry takes: its time and its count. */
    static final long ENTRY_BYTES = 16;

    private final long windowMillis;

    private final CounterMemory memory;

    private boolean retired;

    private long[] times = new long[INITIAL_CAPACITY];

    private long[] counts = new long[INITIAL_CAPACITY];

    /** Index of the oldest entry. */
    private int head;

    private int size;

    private long total;

    /**
     * Creates an empty log.
     * @param windowMillis the window length, positive
     */
    public SlidingLog(long windowMillis) {
        this(windowMillis, CounterMemory.UNBOUNDED);
    }

    /**
     * Creates an empty log that grows only with room from {@code memory}.
     * @param windowMillis the window length, positive
     * @param memory where room for more entries comes from
     */
    public SlidingLog(long windowMillis, CounterMemory memory) {
        LimitDefinition.checkGeometry("Counter", windowMillis, 1);
        this.windowMillis = windowMillis;
        this.memory = memory;
    }

    @Override
    public long windowMillis() {
        return this.windowMillis;
    }

    @Override
    boolean retired() {
        return this.retired;
    }

    @Override
    void retire() {
        this.retired = true;
    }

    @Override
    public boolean countsFor(LimitDefinition definition) {
        return definition.algorithm() == Algorithm.SLIDING_LOG && definition.windowMillis() == this.windowMillis;
    }

    @Override
    void advance(long nowMillis) {
        long oldestLive = nowMillis - this.windowMillis;
        while (this.size > 0 && this.times[this.head] <= oldestLive) {
            this.total -= this.counts[this.head];
            this.head = next(this.head);
            this.size--;
        }
        if (this.times.length > INITIAL_CAPACITY && this.size <= this.times.length / 4) {
            int released = this.times.length / 2;
            resize(released);
            this.memory.release(released * ENTRY_BYTES);
        }
    }

    @Override
    long grownBytes() {
        return (this.times.length - INITIAL_CAPACITY) * ENTRY_BYTES;
    }

    @Override
    long used() {
        return this.total;
    }

    @Override
    long retryAfterMillis(long nowMillis, long cost, long limit) {
        long excess = this.total + cost - limit;
        if (excess <= 0) {
            return 0;
        }
        long freed = 0;
        for (int i = 0, entry = this.head; i < this.size; i++, entry = next(entry)) {
            freed += this.counts[entry];
            if (freed >= excess) {
                return this.times[entry] + this.windowMillis - nowMillis;
            }
        }
        throw new IllegalStateException("cost " + cost + " can never fit under limit " + limit);
    }

    @Override
    void add(long nowMillis, long cost) {
        if (this.size > 0) {
            int newest = newest();
            if (this.times[newest] >= nowMillis) {
                // Same millisecond, or a caller that read the clock before the newest entry's caller.
                this.counts[newest] += cost;
                this.total += cost;
                return;
            }
        }
        if (this.size == this.times.length) {
            if (this.memory.tryReserve(this.times.length * ENTRY_BYTES)) {
                resize(this.times.length * 2);
            }
            else {
                mergeOldest();
            }
        }
        int tail = (this.head + this.size) % this.times.length;
        this.times[tail] = nowMillis;
        this.counts[tail] = cost;
        this.size++;
        this.total += cost;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Permits are counted in the entry that was the newest when they were admitted, or in a later one
     * they were merged into: the oldest entry at or after {@code acquiredAtMillis}. An entry left
     * empty is removed, so refunds never leave entries behind.
     */
    @Override
    void remove(long acquiredAtMillis, long cost) {
        int found = -1;
        for (int i = this.size - 1; i >= 0 && this.times[(this.head + i) % this.times.length] >= acquiredAtMillis; i--) {
            found = i;
        }
        if (found < 0) {
            return;
        }
        int entry = (this.head + found) % this.times.length;
        long taken = Math.min(cost, this.counts[entry]);
        this.counts[entry] -= taken;
        this.total -= taken;
        if (this.counts[entry] == 0) {
            // Later entries move one place towards the head: refunds are of recent permits, so few move.
            for (int i = found; i < this.size - 1; i++) {
                int to = (this.head + i) % this.times.length;
                int from = next(to);
                this.times[to] = this.times[from];
                this.counts[to] = this.counts[from];
            }
            this.size--;
        }
    }

    @Override
    long resetAfterMillis(long nowMillis) {
        return (this.size == 0) ? 0 : this.times[newest()] + this.windowMillis - nowMillis;
    }

    @Override
    void clear() {
        this.head = 0;
        this.size = 0;
        this.total = 0;
    }

    /** Entries currently held: for tests of the memory bound. */
    int entries() {
        return this.size;
    }

    private int newest() {
        return (this.head + this.size - 1) % this.times.length;
    }

    private int next(int index) {
        return (index + 1 == this.times.length) ? 0 : index + 1;
    }

    /** Makes the two oldest entries one, at the later one's time: an over-count, never an under-count. */
    private void mergeOldest() {
        int second = next(this.head);
        this.counts[second] += this.counts[this.head];
        this.head = second;
        this.size--;
    }

    private void resize(int capacity) {
        long[] newTimes = new long[capacity];
        long[] newCounts = new long[capacity];
        for (int i = 0, entry = this.head; i < this.size; i++, entry = next(entry)) {
            newTimes[i] = this.times[entry];
            newCounts[i] = this.counts[entry];
        }
        this.times = newTimes;
        this.counts = newCounts;
        this.head = 0;
    }

}
