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
     * Declares a user of this clock, such as a backend, until the returned registration is closed:
     * a clock that runs a thread of its own ({@link #ticking()}) stops it when its last user closes.
     * Clocks without resources ignore it.
     * <pre>{@code
     * TimeSource.Registration registration = timeSource.register();
     * ... // read the clock
     * registration.close();
     * }</pre>
     * @return the registration, to close once; closing it again does nothing
     */
    default Registration register() {
        return () -> {
        };
    }

    /**
     * The production time source: the wall clock read once at start, then advanced by
     * {@link System#nanoTime()}, so it never goes back when the wall clock is set back.
     * @return the shared monotonic time source
     */
    static TimeSource monotonic() {
        return MonotonicTimeSource.INSTANCE;
    }

    /**
     * The production default: the {@linkplain #monotonic() monotonic} clock, read once a millisecond
     * by a background daemon thread ({@code sliding-limiter-clock}) while decisions are being taken,
     * so that a decision reads a field instead of the system clock. The thread runs only while a
     * user (a backend) is {@linkplain #register() registered}, and parks after a second without a
     * read; reads then go to the clock directly (and wake it). The time lags the clock by about a
     * millisecond (more when the thread waits for a processor, though one read in 1 024 reads the
     * clock itself), and never decreases.
     * @return the shared ticking time source
     */
    static TimeSource ticking() {
        return TickingTimeSource.MONOTONIC;
    }

    /** A user's hold on a clock, from {@link TimeSource#register()} until it is closed. */
    @FunctionalInterface
    interface Registration extends AutoCloseable {

        /** Ends this use of the clock; closing twice does nothing. */
        @Override
        void close();

    }

}
