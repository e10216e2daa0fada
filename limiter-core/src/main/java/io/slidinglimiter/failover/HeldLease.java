package io.slidinglimiter.failover;

import java.util.concurrent.atomic.AtomicLong;

import io.slidinglimiter.core.LimitDefinition;

/** One lease this instance holds.
* <p>
* Its permits not yet admitted, and until when it may admit them. */
final class HeldLease {

    /** The longest a lease lives: a reset or a limit change made on another instance ends it by then. */
    static final long MAX_LEASE_MILLIS = 1_000;

    /** A lease ends this much before its sub-window: the server rounds its time down, this clock may lag a tick. */
    static final long MARGIN_MILLIS = 2;

    /** The shortest span a rate is measured over: two calls a microsecond apart are not a million a second. */
    static final long MIN_RATE_SPAN_MILLIS = 5;

    final LimitDefinition definition;

    final String key;

    final LeaseGrant grant;

    /** Permits not yet admitted; 0 once ended. */
    final AtomicLong left;

    final long validUntilMillis;

    /** What the server said was left, counting the whole lease as used. */
    volatile long serverRemaining;

    /** The permits taken for it, the taking call's cost and top-ups included. */
    volatile long permits;

    /** Below this many permits left, a top-up is taken in the background. */
    final long lowWater;

    final long resetAtMillis;

    final long sentAtMillis;

    /** What was given back when it ended. */
    volatile long returned;

    /** The server's time minus this instance's, as the lease showed it (its send time against the server's). */
    final long serverOffsetMillis;

    HeldLease(LimitDefinition definition, String key, LeaseGrant grant, long spare, long validUntilMillis,
            long serverRemaining, long resetAtMillis, long sentAtMillis) {
        this.definition = definition;
        this.key = key;
        this.grant = grant;
        this.left = new AtomicLong(spare);
        this.permits = grant.taken();
        this.lowWater = Math.max(1, spare / 4);
        this.validUntilMillis = validUntilMillis;
        this.serverRemaining = serverRemaining;
        this.resetAtMillis = resetAtMillis;
        this.sentAtMillis = sentAtMillis;
        this.serverOffsetMillis = grant.decidedAtMillis() - sentAtMillis;
    }

    /** Until when a lease may admit, on this instance's clock: before its sub-window ends, at most a second. */
    static long validUntil(LeaseGrant grant, long sentAtMillis) {
        return Math.min(sentAtMillis + MAX_LEASE_MILLIS,
                sentAtMillis + grant.subWindowEndMillis() - grant.decidedAtMillis() - MARGIN_MILLIS);
    }

    /**
     * Adds a top-up's permits to this lease when they were taken in its sub-window, from the same
     * counter, under the same definition, while it still admits.
     * @param grant the top-up as the server took it
     * @param limit the definition it was taken under
     * @param nowMillis the time now, on this instance's clock
     * @return whether they joined it; else they are the key's next lease
     */
    boolean joins(LeaseGrant grant, LimitDefinition limit, long nowMillis) {
        long slotMillis = limit.windowMillis() / limit.subWindows();
        boolean sameSubWindow = grant.decidedAtMillis() / slotMillis == this.grant.decidedAtMillis() / slotMillis
                && grant.counterCreatedAtMillis() == this.grant.counterCreatedAtMillis()
                && this.definition.equals(limit) && nowMillis < this.validUntilMillis;
        if (sameSubWindow) {
            this.serverRemaining = grant.decision().remaining();
            this.permits += grant.taken();
            this.left.addAndGet(grant.taken());
        }
        return sameSubWindow;
    }

    /**
     * The permits to ask the server for after this lease, the call's cost included: the cost plus what
     * this instance's rate for the key (measured over this lease) admits until the next lease
     * would end.
     * @param limit the definition in force
     * @param cost the call's permits
     * @param nowMillis the time now, on this instance's clock
     * @return at least {@code cost}
     */
    long nextSize(LimitDefinition limit, long cost, long nowMillis) {
        long used = this.permits - this.returned - Math.max(0, this.left.get());
        double perMilli = (double) used / Math.max(MIN_RATE_SPAN_MILLIS, nowMillis - this.sentAtMillis);
        // The server's time now, from the offset this lease showed; the next lease ends with its sub-window.
        long serverNow = nowMillis + this.serverOffsetMillis;
        long slotMillis = limit.windowMillis() / limit.subWindows();
        long lifetime = Math.min(MAX_LEASE_MILLIS, (serverNow / slotMillis + 1) * slotMillis - serverNow);
        double more = Math.ceil(perMilli * lifetime);
        return (more >= limit.limit()) ? limit.limit() : Math.max(cost, cost + (long) more);
    }

}
