package io.slidinglimiter.local;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The local backend's bounds.
 * <p>
 * How many counters live and their estimated bytes, each held under
 * its maximum; counters that grow (sliding logs) take their growth from the same bytes.
 */
final class CounterBudget implements CounterMemory {

    private final long maxKeys;

    private final long maxBytes;

    private final AtomicLong liveCounters = new AtomicLong();

    private final AtomicLong liveBytes = new AtomicLong();

    CounterBudget(long maxKeys, long maxBytes) {
        this.maxKeys = maxKeys;
        this.maxBytes = maxBytes;
    }

    /** Takes room for one counter of {@code weight} bytes, if both bounds leave it. */
    boolean tryAddCounter(long weight) {
        if (this.liveCounters.incrementAndGet() > this.maxKeys) {
            this.liveCounters.decrementAndGet();
            return false;
        }
        if (this.liveBytes.addAndGet(weight) > this.maxBytes) {
            releaseCounter(weight);
            return false;
        }
        return true;
    }

    /** Gives back the room of one counter of {@code weight} bytes. */
    void releaseCounter(long weight) {
        this.liveCounters.decrementAndGet();
        this.liveBytes.addAndGet(-weight);
    }

    @Override
    public boolean tryReserve(long bytes) {
        if (this.liveBytes.addAndGet(bytes) > this.maxBytes) {
            this.liveBytes.addAndGet(-bytes);
            return false;
        }
        return true;
    }

    @Override
    public void release(long bytes) {
        this.liveBytes.addAndGet(-bytes);
    }

    /** How full the tighter bound is: counters against {@code maxKeys}, bytes against {@code maxBytes}; 0 to 1. */
    double fill() {
        return Math.min(1.0, Math.max((double) this.liveCounters.get() / this.maxKeys,
                (double) this.liveBytes.get() / this.maxBytes));
    }

    long liveCounters() {
        return this.liveCounters.get();
    }

    long liveBytes() {
        return this.liveBytes.get();
    }

}
