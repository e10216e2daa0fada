package io.slidinglimiter.jdbc;

import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The time a statement decides at, with the deadline after which it changes nothing.
 * <p>
 * In production the database's own clock decides (no time is handed), and the deadline is this JVM's
 * clock plus the database's offset, as the last decision told it, plus max-wait. A backend at a
 * test's fixed time hands that time to every statement, and no deadline.
 */
final class StatementClock {

    /** The time every statement is handed, for tests that replay a schedule; null in production. */
    private final LongSupplier fixedTime;

    private final long maxWaitMillis;

    /**
     * The database's clock minus this JVM's, as the last decision told it, so that a decision carries
     * the database time after which its caller no longer waits; {@link Long#MIN_VALUE} before one.
     */
    private volatile long offsetMillis = Long.MIN_VALUE;

    StatementClock(LongSupplier fixedTime, long maxWaitMillis) {
        this.fixedTime = fixedTime;
        this.maxWaitMillis = maxWaitMillis;
    }

    /** @return whether every statement is handed a test's time */
    boolean isFixed() {
        return this.fixedTime != null;
    }

    /** @return the time a statement is handed: a test's, or null for the database's own */
    Long now() {
        return (this.fixedTime != null) ? this.fixedTime.getAsLong() : null;
    }

    /** Learns the database's clock from a decision's time. */
    void noteDecidedAt(long databaseMillis) {
        if (this.fixedTime == null) {
            this.offsetMillis = databaseMillis - System.currentTimeMillis();
        }
    }

    /**
     * The database time after which a decision sent now changes nothing: when its caller stops waiting
     * for a database that answers (max-wait); null before the database's clock is known. A statement
     * in flight when the database stalled, whose caller the statement watch released after the
     * timeout, may still count if the database wakes before then: an over-count of at most the
     * statements in flight, never an under-count.
     */
    Long deadline() {
        long offset = this.offsetMillis;
        if (this.fixedTime != null || offset == Long.MIN_VALUE) {
            return null;
        }
        return System.currentTimeMillis() + offset + this.maxWaitMillis;
    }

    /**
     * What a decision the database ran after its deadline fails with: a slow call, not the database's
     * failure (it answered), so no breaker opens and no outage starts for it.
     * @return the failure
     */
    static JdbcBackendException afterDeadline() {
        return new JdbcTimeoutException("PostgreSQL ran the decision after its caller stopped waiting (it changed"
                + " nothing)", null, CompletableFuture.completedFuture(false));
    }

}
