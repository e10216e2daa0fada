package io.slidinglimiter.failover;

import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.slidinglimiter.core.TimeSource;

/**
 * Whether the server is failing the limiter now, as the logs say it.
 * <p>
 * Whether the server is failing the limiter now, said once when it starts and once when it ends, with a
 * summary a minute while it lasts; and, while the server cannot be reached, a probe that finds it again
 * without waiting for traffic.
 * <p>
 * An outage starts with a failure and ends once decisions succeed and none failed for
 * {@value #QUIET_MILLIS} ms, so a partial failure (under maxmemory, admissions fail while
 * rejections, which write nothing, succeed) is one outage, not a log line per decision.
 * <p>
 * Decisions that fell back because their reply came too late while the server was answering others
 * are not an outage but this application's overload: {@link SlowCalls} says those.
 */
final class Outage implements AutoCloseable {

    static final long QUIET_MILLIS = 1_000;

    static final long SUMMARY_MILLIS = 60_000;

    static final long PROBE_MILLIS = 500;

    private static final Logger logger = Logger.getLogger(Outage.class.getName());

    private final TimeSource timeSource;

    /** The backend, named in the messages and the probe's thread. */
    private final RemoteBackend remote;

    private final BooleanSupplier probe;

    private final Runnable onProbeSuccess;

    private final LongAdder fallbacksInOutage = new LongAdder();

    private volatile boolean failing;

    private volatile long startedAtMillis;

    private volatile long lastFailureMillis;

    private volatile long nextSummaryMillis;

    private volatile String cause = "";

    /** Whether the last failure was the server out of reach (no answer), which a read can tell has ended. */
    private volatile boolean unreachable;

    private ScheduledExecutorService prober;

    private ScheduledFuture<?> probing;

    /**
     * @param timeSource the clock of the durations
     * @param remote the backend whose outage this is
     * @param probe a read that tells whether the server answers again; null for none
     * @param onProbeSuccess what to do when a probe succeeds during an outage
     */
    Outage(TimeSource timeSource, RemoteBackend remote, BooleanSupplier probe, Runnable onProbeSuccess) {
        this.timeSource = timeSource;
        this.remote = remote;
        this.probe = probe;
        this.onProbeSuccess = onProbeSuccess;
    }

    /** @return the server's name as operators know it: {@code "Redis"}, {@code "PostgreSQL"} */
    String serverName() {
        return this.remote.serverName();
    }

    /** Whether the server answered a failed call (with an error), rather than not at all. */
    boolean answered(Throwable failure) {
        return this.remote.answered(failure);
    }

    boolean isFailing() {
        return this.failing;
    }

    String cause() {
        return this.cause;
    }

    long startedAtMillis() {
        return this.startedAtMillis;
    }

    void fellBack() {
        if (this.failing) {
            this.fallbacksInOutage.increment();
        }
    }

    void failed(RuntimeException ex, boolean unreachable) {
        long now = this.timeSource.currentTimeMillis();
        this.lastFailureMillis = now;
        this.cause = String.valueOf(ex.getMessage());
        this.unreachable = unreachable;
        boolean started = false;
        synchronized (this) {
            if (!this.failing) {
                this.failing = true;
                this.startedAtMillis = now;
                this.nextSummaryMillis = now + SUMMARY_MILLIS;
                this.fallbacksInOutage.reset();
                started = true;
                startProbing();
            }
        }
        if (started) {
            logger.log(Level.WARNING, () -> this.remote.serverName() + " is failing the rate limiter (" + this.cause
                    + "); decisions follow each limit's " + this.remote.propertyPrefix() + ".on-failure policy until"
                    + " it answers again, waiting at most " + this.remote.propertyPrefix() + ".timeout for a "
                    + this.remote.serverName() + " that answers nothing.");
        }
        else if (now >= this.nextSummaryMillis) {
            this.nextSummaryMillis = now + SUMMARY_MILLIS;
            logger.log(Level.WARNING, () -> this.remote.serverName() + " is still failing the rate limiter after "
                    + (now - this.startedAtMillis) / 1000 + " s (" + this.cause + "); "
                    + this.fallbacksInOutage.sum() + " decisions followed the failure policy so far.");
        }
    }

    void succeeded() {
        if (!this.failing) {
            return;
        }
        long now = this.timeSource.currentTimeMillis();
        if (now - this.lastFailureMillis < QUIET_MILLIS) {
            return;
        }
        synchronized (this) {
            if (!this.failing) {
                return;
            }
            this.failing = false;
            stopProbing();
        }
        logger.info(() -> this.remote.serverName() + " answers the rate limiter again after " + (now - this.startedAtMillis)
                + " ms; " + this.fallbacksInOutage.sum() + " decisions followed the failure policy meanwhile.");
    }

    @Override
    public synchronized void close() {
        stopProbing();
        if (this.prober != null) {
            this.prober.shutdownNow();
        }
    }

    private void startProbing() {
        if (this.probe == null) {
            return;
        }
        if (this.prober == null) {
            this.prober = Executors.newSingleThreadScheduledExecutor((task) -> {
                Thread thread = new Thread(null, task,
                        "sliding-limiter-" + this.remote.serverName().toLowerCase(Locale.ROOT) + "-probe", 0, false);
                thread.setDaemon(true);
                thread.setContextClassLoader(Outage.class.getClassLoader());
                return thread;
            });
        }
        this.probing = this.prober.scheduleWithFixedDelay(this::probeOnce, PROBE_MILLIS, PROBE_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    private void stopProbing() {
        if (this.probing != null) {
            this.probing.cancel(false);
            this.probing = null;
        }
    }

    /** Only an outage of reach: a server that answers but refuses writes is found again by a decision. */
    private void probeOnce() {
        if (!this.failing || !this.unreachable) {
            return;
        }
        try {
            if (this.probe.getAsBoolean()) {
                // The probe's answer ends the quiet time: the last failure is as old as it gets.
                this.lastFailureMillis = this.timeSource.currentTimeMillis() - QUIET_MILLIS;
                this.onProbeSuccess.run();
                succeeded();
            }
        }
        catch (RuntimeException ex) {
            // Still out of reach: the next probe tries again.
        }
    }

}
