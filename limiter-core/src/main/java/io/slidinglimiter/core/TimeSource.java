package io.slidinglimiter.core;

/**
 * Where counters get the time from. Every backend takes one, so tests can drive time with a
 * {@link ManualTimeSource} and nothing sleeps.
 */
@FunctionalInterface
public interface TimeSource {

    /**
     * The current time in milliseconds since the epoch, never lower than a value returned before.
     * @return the current time in milliseconds
     */
    long currentTimeMillis();

    /**
     * The production time source: the wall clock read once at start, then advanced by
     * {@link System#nanoTime()}, so it never goes back when the wall clock is set back.
     * @return the shared monotonic time source
     */
    static TimeSource monotonic() {
        return MonotonicTimeSource.INSTANCE;
    }

}
