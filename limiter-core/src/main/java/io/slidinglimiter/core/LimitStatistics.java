package io.slidinglimiter.core;

import java.util.concurrent.atomic.LongAdder;

/**
 * How one limit decided since start: calls admitted, calls rejected, decisions taken without its
 * backend (a Redis outage).
 * <p>
 * Counted without a lock; read for metrics and the
 * Actuator endpoint. A fallback decision is also counted as allowed or rejected.
 * <p>
 * Admissions and rejections, counted on every decision, go to {@link PerThreadCount}s: most
 * threads add to a cell of their own without a locked instruction.
 */
public final class LimitStatistics {

    private final PerThreadCount allowed = new PerThreadCount();

    private final PerThreadCount rejected = new PerThreadCount();

    private final LongAdder fallback = new LongAdder();

    private final LongAdder chargeErrors = new LongAdder();

    private final LongAdder shadowRejected = new LongAdder();

    /**
     * Counts one decision.
     * @param wasAllowed whether the call was admitted
     */
    public void record(boolean wasAllowed) {
        (wasAllowed ? this.allowed : this.rejected).increment();
    }

    /** Counts one decision taken without the limit's backend. */
    public void recordFallback() {
        this.fallback.increment();
    }

    /**
     * Counts one call left at its cost because its charge could not be settled: the charge failed,
     * gave no number or a negative one, or the settle did not reach the backend.
     */
    public void recordChargeError() {
        this.chargeErrors.increment();
    }

    /** Counts one call that a limit in shadow mode would have rejected, and let through. */
    public void recordShadowRejected() {
        this.shadowRejected.increment();
    }

    /** @return calls admitted since start */
    public long allowed() {
        return this.allowed.sum();
    }

    /** @return calls rejected since start */
    public long rejected() {
        return this.rejected.sum();
    }

    /** @return decisions taken without the backend since start */
    public long fallback() {
        return this.fallback.sum();
    }

    /** @return calls a limit in shadow mode would have rejected since start */
    public long shadowRejected() {
        return this.shadowRejected.sum();
    }

    /** @return calls left at their cost since start because their charge could not be settled */
    public long chargeErrors() {
        return this.chargeErrors.sum();
    }

}
