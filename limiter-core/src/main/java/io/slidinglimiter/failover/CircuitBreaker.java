package io.slidinglimiter.failover;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Stops calling a shard of the server while it fails.
 * <p>
 * Stops calling the server for {@code openMillis} after {@code failureThreshold} failures in a row, so a
 * dead server adds no latency; then lets a single call through to probe, and closes on its success.
 * Times are the caller's clock, in milliseconds.
 * <p>
 * The state machine, one immutable {@link State} swapped by compare-and-set, so that every
 * operation is one atomic step (checked by {@code CircuitBreakerLincheckTests}):
 * <pre>
 * CLOSED (failures n)    --failure, n + 1 &lt; threshold--&gt;  CLOSED (n + 1)
 * CLOSED (failures n)    --failure, n + 1 &gt;= threshold--&gt; OPEN until now + openMillis
 * any                    --success--&gt;                      CLOSED (0)
 * OPEN until t           --allowsCall at or after t--&gt;     HALF-OPEN (one probe granted; others refused)
 * HALF-OPEN              --returnProbe--&gt;                  OPEN until t (the probe was not made)
 * HALF-OPEN              --failure--&gt;                      OPEN until now + openMillis
 * OPEN until t           --failure (a call already sent)--&gt; OPEN until now + openMillis
 * </pre>
 */
final class CircuitBreaker {

    /**
     * @param failures failures in a row since the last success
     * @param openUntilMillis zero while closed; else when the pause ends
     * @param probing whether the one probe of a half-open breaker is out
     */
    private record State(int failures, long openUntilMillis, boolean probing) {
    }

    private static final State CLOSED = new State(0, 0, false);

    private final int failureThreshold;

    private final long openMillis;

    private final AtomicReference<State> state = new AtomicReference<>(CLOSED);

    CircuitBreaker(int failureThreshold, long openMillis) {
        this.failureThreshold = failureThreshold;
        this.openMillis = openMillis;
    }

    /** Whether a call may go to the server now; while half-open, only one at a time. */
    boolean allowsCall(long nowMillis) {
        while (true) {
            State current = this.state.get();
            if (current.openUntilMillis() == 0) {
                return true;
            }
            if (nowMillis < current.openUntilMillis() || current.probing()) {
                return false;
            }
            if (this.state.compareAndSet(current, new State(current.failures(), current.openUntilMillis(), true))) {
                return true;
            }
        }
    }

    /** Gives back a probe that {@link #allowsCall} granted but that was not made. */
    void returnProbe() {
        while (true) {
            State current = this.state.get();
            if (!current.probing()
                    || this.state.compareAndSet(current, new State(current.failures(), current.openUntilMillis(), false))) {
                return;
            }
        }
    }

    void recordSuccess() {
        // Read first: every decision succeeds while the server answers, and a write from each of many
        // threads to the one field they all read would keep its cache line moving between cores.
        if (this.state.get() != CLOSED) {
            this.state.set(CLOSED);
        }
    }

    void recordFailure(long nowMillis) {
        while (true) {
            State current = this.state.get();
            int failures = (current.failures() == Integer.MAX_VALUE) ? current.failures() : current.failures() + 1;
            State next = (current.probing() || failures >= this.failureThreshold)
                    ? new State(failures, nowMillis + this.openMillis, false)
                    : new State(failures, current.openUntilMillis(), false);
            if (this.state.compareAndSet(current, next)) {
                return;
            }
        }
    }

    boolean isOpen() {
        return this.state.get().openUntilMillis() != 0;
    }

    /** How long a rejected caller should wait for the next probe. */
    long pauseMillis(long nowMillis) {
        long openUntil = this.state.get().openUntilMillis();
        return (openUntil == 0) ? this.openMillis : Math.max(1, openUntil - nowMillis);
    }

}
