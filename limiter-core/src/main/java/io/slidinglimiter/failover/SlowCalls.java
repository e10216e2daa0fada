package io.slidinglimiter.failover;

import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.slidinglimiter.core.TimeSource;

/**
 * Decisions that fell back because their reply came too late while the server was answering
 * others: not the server's outage but this application's overload. Counted, logged the first time with what
 * to do, then summed up at most once a minute while they go on.
 */
final class SlowCalls {

    /** How often slow calls that go on are summed up. */
    static final long SUMMARY_MILLIS = 60_000;

    private static final Logger logger = Logger.getLogger(SlowCalls.class.getName());

    private final TimeSource timeSource;

    /** The backend, named in the messages. */
    private final RemoteBackend remote;

    private final LongAdder total = new LongAdder();

    private final LongAdder slowSinceSummary = new LongAdder();

    /** When slow calls are next summed up; 0 until the first, which is logged at once. */
    private volatile long nextSlowSummaryMillis;

    SlowCalls(TimeSource timeSource, RemoteBackend remote) {
        this.timeSource = timeSource;
        this.remote = remote;
    }

    /** @return decisions that fell back as slow calls since start */
    long count() {
        return this.total.sum();
    }

    /**
     * A decision fell back though the server was answering: its reply came too late, this application
     * (or the server's host) being busy. Logged the first time, then summed up at most once a minute.
     * @param ex what the call failed with
     */
    void add(RuntimeException ex) {
        this.total.increment();
        long now = this.timeSource.currentTimeMillis();
        this.slowSinceSummary.increment();
        long next = this.nextSlowSummaryMillis;
        if (next != 0 && now < next) {
            return;
        }
        synchronized (this) {
            if (this.nextSlowSummaryMillis != next) {
                return;
            }
            this.nextSlowSummaryMillis = now + SUMMARY_MILLIS;
        }
        long calls = this.slowSinceSummary.sumThenReset();
        String server = this.remote.serverName();
        String prefix = this.remote.propertyPrefix();
        if (next == 0) {
            logger.log(Level.WARNING, () -> "A rate limiter decision followed " + prefix + ".on-failure though "
                    + server + " was answering (" + ex.getMessage() + "): its reply came too late, this application"
                    + " (or the host " + server + " runs on) being too busy. Give it more processor time or fewer"
                    + " concurrent requests, or raise " + prefix + ".max-wait (and " + prefix + ".timeout for a reply"
                    + " no other answered meanwhile); such decisions are summed up at most once a minute.");
        }
        else {
            logger.log(Level.WARNING, () -> calls + " rate limiter decisions followed " + prefix + ".on-failure in"
                    + " the last minute though " + server + " was answering: their replies came too late in this busy"
                    + " application (or on the busy host of " + server + ").");
        }
    }

}
