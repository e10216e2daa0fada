package io.slidinglimiter.failover;

import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;


import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;

/**
 * What the outcome of each call to the server tells its listeners.
 * <p>
 * A failure counts against its shard's breaker and the outage only when it was the server's (a call
 * that was slow in this JVM is a slow call, not a failure); a success closes the shard's breaker, may
 * end the outage, and lets the shard be told what fallbacks admitted for its keys meanwhile.
 */
final class CallOutcomes {

    private final ShardBreakers breakers;

    private final TimeSource timeSource;

    private final Outage outage;

    private final SlowCalls slowCalls;

    /** What fallbacks admitted, until the server counts it. */
    private final UnreportedAdmissions unreported;

    /** The backend: counts what fallbacks admitted, and tells what its failures mean. */
    private final RemoteBackend remote;

    /** The breaker of a key's shard. */
    private final BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf;

    /**
     * @param breakers the shards' breakers
     * @param timeSource the clock of the breakers and the outage
     * @param probe a read that answers whether the server is reachable again; null for none
     * @param remote the backend, which counts what fallbacks admitted
     * @param unreported what fallbacks admitted
     * @param breakerOf the breaker of a key's shard
     */
    CallOutcomes(ShardBreakers breakers, TimeSource timeSource, BooleanSupplier probe,
            RemoteBackend remote, UnreportedAdmissions unreported,
            BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf) {
        this.breakers = breakers;
        this.timeSource = timeSource;
        this.outage = new Outage(timeSource, remote, probe, this::serverAnswersAgain);
        this.slowCalls = new SlowCalls(timeSource, remote);
        this.remote = remote;
        this.unreported = unreported;
        this.breakerOf = breakerOf;
    }

    Outage outage() {
        return this.outage;
    }

    SlowCalls slowCalls() {
        return this.slowCalls;
    }

    /**
     * Only the server's own failures count towards the breaker and the outage: a call that timed out
     * while the server answered others, or whose reply came soon after, was slow here (a paused or busy
     * JVM, a queue), and a failure of one limit's own values or data ({@link LimitFaults}) is that
     * limit's: only this call falls back. Either gives back the half-open probe the call may hold, so
     * that the next call probes: a probe that no outcome ended would keep the breaker open for good. A
     * call that held none (it was sent while the breaker was closed) lets one more probe out at most.
     */
    void recordFailure(RuntimeException ex, CircuitBreaker breaker) {
        if (this.remote.isLimitsOwn(ex)) {
            // The server answered, or was never asked: the fault is the limit's, not the shard's.
            breaker.returnProbe();
            return;
        }
        if (ex instanceof LateFailure late) {
            late.serverFailed().whenComplete((serverFailed, unknown) -> {
                if (unknown != null || serverFailed) {
                    // A check that could not tell is the server's failure: the breaker ends the probe either way.
                    recordServerFailure(ex, breaker);
                }
                else {
                    this.slowCalls.add(ex);
                    breaker.returnProbe();
                    // Its reply came: the shard answers, and can be told what fallbacks admitted.
                    reportToAnswering(breaker);
                }
            });
            return;
        }
        recordServerFailure(ex, breaker);
    }

    private void recordServerFailure(RuntimeException ex, CircuitBreaker breaker) {
        breaker.recordFailure(this.timeSource.currentTimeMillis());
        this.outage.failed(ex, !this.remote.answered(ex));
    }

    void recordSuccess(CircuitBreaker breaker) {
        breaker.recordSuccess();
        // On Cluster, an outage lasts while any shard's breaker stays open, whatever the others do.
        if (this.breakers.single() || !this.breakers.anyOpen()) {
            this.outage.succeeded();
        }
        reportToAnswering(breaker);
    }

    /**
     * Counts on the server what fallbacks admitted for the keys of a shard that has just answered. Only
     * that shard's: on Cluster another may still be stalled, and would count a report only in a
     * dataset its promoted replica replaces.
     */
    private void reportToAnswering(CircuitBreaker breaker) {
        if (!this.unreported.isEmpty()) {
            this.unreported.report(this.remote::countAdmitted, this.timeSource.currentTimeMillis(),
                    (admitted) -> this.breakers.single() || this.breakerOf.apply(admitted.limit(), admitted.key()) == breaker);
        }
    }

    /** A probe found the server (one shard) again: its breaker closes, and what fallbacks admitted meanwhile is counted there. */
    void serverAnswersAgain() {
        this.breakers.closeAll();
        this.unreported.report(this.remote::countAdmitted, this.timeSource.currentTimeMillis(), (admitted) -> true);
    }

}
