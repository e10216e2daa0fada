package io.slidinglimiter.redis;

import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisCommandExecutionException;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;

/**
 * What the outcome of each call to Redis tells, and to whom: a failure counts against its shard's
 * breaker and the outage only when it was Redis's (a call that was slow in this JVM is a slow call,
 * not a failure); a success closes the shard's breaker, may end the outage, and lets the shard be
 * told what fallbacks admitted for its keys meanwhile.
 */
final class CallOutcomes {

    private final ShardBreakers breakers;

    private final TimeSource timeSource;

    private final RedisOutage outage;

    private final SlowCalls slowCalls;

    /** What fallbacks admitted, until Redis counts it. */
    private final UnreportedAdmissions unreported;

    private final UnreportedAdmissions.Reporter reporter;

    /** The breaker of a key's shard. */
    private final BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf;

    /**
     * @param breakers the shards' breakers
     * @param timeSource the clock of the breakers and the outage
     * @param probe a read that answers whether Redis is reachable again; null for none
     * @param reporter counts in Redis what fallbacks admitted
     * @param unreported what fallbacks admitted
     * @param breakerOf the breaker of a key's shard
     */
    CallOutcomes(ShardBreakers breakers, TimeSource timeSource, BooleanSupplier probe,
            UnreportedAdmissions.Reporter reporter, UnreportedAdmissions unreported,
            BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf) {
        this.breakers = breakers;
        this.timeSource = timeSource;
        this.outage = new RedisOutage(timeSource, probe, this::redisAnswersAgain);
        this.slowCalls = new SlowCalls(timeSource);
        this.reporter = reporter;
        this.unreported = unreported;
        this.breakerOf = breakerOf;
    }

    RedisOutage outage() {
        return this.outage;
    }

    SlowCalls slowCalls() {
        return this.slowCalls;
    }

    /**
     * Only Redis's own failures count towards the breaker and the outage: a call that timed out while
     * Redis answered others, or whose reply came soon after, was slow here (a paused or busy JVM, a
     * queue), and a failure of one limit's own values or data ({@link LimitFaults}) is that limit's:
     * only this call falls back.
     */
    void recordFailure(RuntimeException ex, CircuitBreaker breaker) {
        if (LimitFaults.isLimitsOwn(ex)) {
            // Redis answered, or was never asked: the fault is the limit's, not the shard's.
            return;
        }
        if (ex instanceof RedisTimeoutException timeout) {
            timeout.redisFailed().thenAccept((redisFailed) -> {
                if (redisFailed) {
                    recordRedisFailure(ex, breaker);
                }
                else {
                    this.slowCalls.add(ex);
                    // Its reply came: the shard answers, and can be told what fallbacks admitted.
                    reportToAnswering(breaker);
                }
            });
            return;
        }
        recordRedisFailure(ex, breaker);
    }

    private void recordRedisFailure(RuntimeException ex, CircuitBreaker breaker) {
        breaker.recordFailure(this.timeSource.currentTimeMillis());
        boolean answered = ex.getCause() instanceof RedisCommandExecutionException;
        this.outage.failed(ex, !answered);
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
     * Counts in Redis what fallbacks admitted for the keys of a shard that has just answered. Only
     * that shard's: on Cluster another may still be stalled, and would count a report only in a
     * dataset its promoted replica replaces.
     */
    private void reportToAnswering(CircuitBreaker breaker) {
        if (!this.unreported.isEmpty()) {
            this.unreported.report(this.reporter, this.timeSource.currentTimeMillis(),
                    (admitted) -> this.breakers.single() || this.breakerOf.apply(admitted.limit(), admitted.key()) == breaker);
        }
    }

    /** A probe found Redis (one server) again: its breaker closes, and what fallbacks admitted meanwhile is counted there. */
    void redisAnswersAgain() {
        this.breakers.closeAll();
        this.unreported.report(this.reporter, this.timeSource.currentTimeMillis(), (admitted) -> true);
    }

}
