package io.slidinglimiter.redis;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stops calling Redis for {@code openMillis} after {@code failureThreshold} failures in a row, so a
 * dead Redis adds no latency; then lets a single call through to probe, and closes on its success.
 * Times are the caller's clock, in milliseconds.
 */
final class CircuitBreaker {

    private final int failureThreshold;

    private final long openMillis;

    private final AtomicInteger consecutiveFailures = new AtomicInteger();

    private final AtomicBoolean probing = new AtomicBoolean();

    /** Zero while closed; else when the pause ends. */
    private volatile long openUntilMillis;

    CircuitBreaker(int failureThreshold, long openMillis) {
        this.failureThreshold = failureThreshold;
        this.openMillis = openMillis;
    }

    /** Whether a call may go to Redis now; while half-open, only one at a time. */
    boolean allowsCall(long nowMillis) {
        long openUntil = this.openUntilMillis;
        if (openUntil == 0) {
            return true;
        }
        return nowMillis >= openUntil && this.probing.compareAndSet(false, true);
    }

    /** Gives back a probe that {@link #allowsCall} granted but that was not made. */
    void returnProbe() {
        this.probing.set(false);
    }

    void recordSuccess() {
        this.consecutiveFailures.set(0);
        this.openUntilMillis = 0;
        this.probing.set(false);
    }

    void recordFailure(long nowMillis) {
        if (this.probing.get() || this.consecutiveFailures.incrementAndGet() >= this.failureThreshold) {
            this.openUntilMillis = nowMillis + this.openMillis;
            this.probing.set(false);
        }
    }

    boolean isOpen() {
        return this.openUntilMillis != 0;
    }

    /** How long a rejected caller should wait for the next probe. */
    long pauseMillis(long nowMillis) {
        long openUntil = this.openUntilMillis;
        return (openUntil == 0) ? this.openMillis : Math.max(1, openUntil - nowMillis);
    }

}
