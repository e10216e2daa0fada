package io.slidinglimiter.local;

import io.slidinglimiter.Decision;

/**
 * One counter alone, without a backend around it, for the benchmarks.
 * <p>
 * One counter alone, without a backend around it, for the benchmarks and the charts: the counters
 * are package-private in the core, and this class shares their package (in this unpublished
 * module only) to reach them.
 */
public final class RawCounter {

    private final WindowCounter counter;

    private RawCounter(WindowCounter counter) {
        this.counter = counter;
    }

    /**
     * A sliding window counter.
     * @param windowMillis its window
     * @param subWindows its sub-windows
     * @param nowMillis the time it starts at
     * @return the counter
     */
    public static RawCounter slidingWindow(long windowMillis, int subWindows, long nowMillis) {
        return new RawCounter(new SlidingWindowCounter(windowMillis, subWindows, nowMillis));
    }

    /**
     * A sliding log.
     * @param windowMillis its window
     * @return the counter
     */
    public static RawCounter slidingLog(long windowMillis) {
        return new RawCounter(new SlidingLog(windowMillis));
    }

    /**
     * Takes permits if they fit.
     * @param nowMillis the time now
     * @param cost the permits
     * @param limit the limit
     * @return the decision
     */
    public Decision tryAcquire(long nowMillis, long cost, long limit) {
        return this.counter.tryAcquire(nowMillis, cost, limit);
    }

    /**
     * Takes permits if they fit, answering without a {@link Decision}.
     * @param nowMillis the time now
     * @param cost the permits
     * @param limit the limit
     * @return what the counter answers (see the core's {@code WindowCounter#acquire})
     */
    public long acquire(long nowMillis, long cost, long limit) {
        return this.counter.acquire(nowMillis, cost, limit);
    }

}
