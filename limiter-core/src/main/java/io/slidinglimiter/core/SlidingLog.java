package io.slidinglimiter.core;

/**
 * The exact sliding log: the admission time of every permit still in the window, so that the
 * permits admitted in any {@code (t - W, t]} never exceed the limit.
 * <p>
 * Permits admitted in the same millisecond share one entry (time and count) in a ring buffer that
 * grows as needed; entries never outnumber the permits in the window, so memory is O(limit) per
 * key, and usually far less.
 */
public final class SlidingLog extends WindowCounter {

    private static final int INITIAL_CAPACITY = 8;

    private final long windowMillis;

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
        LimitDefinition.checkGeometry("Counter", windowMillis, 1);
        this.windowMillis = windowMillis;
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
            grow();
        }
        int tail = (this.head + this.size) % this.times.length;
        this.times[tail] = nowMillis;
        this.counts[tail] = cost;
        this.size++;
        this.total += cost;
    }

    @Override
    void remove(long acquiredAtMillis, long cost) {
        // Entries are in time order and merged per millisecond: at most one holds that time.
        for (int i = this.size - 1; i >= 0; i--) {
            int entry = (this.head + i) % this.times.length;
            if (this.times[entry] == acquiredAtMillis) {
                long taken = Math.min(cost, this.counts[entry]);
                this.counts[entry] -= taken;
                this.total -= taken;
                return;
            }
            if (this.times[entry] < acquiredAtMillis) {
                return;
            }
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

    private void grow() {
        int capacity = this.times.length * 2;
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
