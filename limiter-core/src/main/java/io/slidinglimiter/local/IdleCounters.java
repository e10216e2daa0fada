package io.slidinglimiter.local;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import io.slidinglimiter.core.TimeSource;

/**
 * Drops the local backend's counters that hold nothing, giving their room back.
 * <p>
 * When a new key
 * needs room, at least once a minute while keys arrive, and every {@value #SCHEDULED_SWEEP_MILLIS}
 * ms on a daemon thread that all backends share, so that a flood's counters go soon after their
 * window whether or not new keys arrive. A counter that holds permits is never dropped. The thread
 * starts with the first store and ends with the last one closed (or collected unclosed), so that an
 * application that stops, or fails to start, leaves no thread of the limiter's behind (a servlet
 * container warns of one as a leak).
 */
final class IdleCounters implements AutoCloseable {

    /** How often counters that hold nothing are dropped as keys arrive while the bounds leave room. */
    private static final long IDLE_SWEEP_MILLIS = 60_000;

    /** How often at most a full store looks for counters that hold nothing. */
    private static final long FULL_SWEEP_MILLIS = 1_000;

    /** How often, in real time, the sweeper drops every backend's counters that hold nothing. */
    static final long SCHEDULED_SWEEP_MILLIS = 10_000;

    /** One daemon thread for every backend while any is open; null while none is. */
    private static ScheduledExecutorService sweeper;

    /** The stores that hold a turn on {@link #sweeper}. */
    private static int openStores;

    /** Whether this store gave its turn back. */
    private final AtomicBoolean released = new AtomicBoolean();

    private final Map<String, LimitCounters> limits;

    private final CounterBudget budget;

    private final TimeSource timeSource;

    private final ReentrantLock sweepLock = new ReentrantLock();

    /** This store's turn on the sweeper's schedule, cancelled by {@link #close()}. */
    private final ScheduledFuture<?> scheduled;

    private volatile long nextIdleSweepMillis;

    private volatile long nextFullSweepMillis;

    /**
     * @param limits the backend's counters, by limit name
     * @param budget the bounds they hold room in
     * @param timeSource the backend's clock, which tells whether a counter holds anything
     * @param periodMillis how often, in real time, the sweeper drops counters that hold nothing
     */
    IdleCounters(Map<String, LimitCounters> limits, CounterBudget budget, TimeSource timeSource, long periodMillis) {
        this.limits = limits;
        this.budget = budget;
        this.timeSource = timeSource;
        this.nextIdleSweepMillis = timeSource.currentTimeMillis() + IDLE_SWEEP_MILLIS;
        // The schedule holds this store weakly: a backend nobody closed is collected all the same.
        WeakReference<IdleCounters> self = new WeakReference<>(this);
        ScheduledFuture<?>[] turn = new ScheduledFuture<?>[1];
        AtomicBoolean released = this.released;
        turn[0] = openSweeper().scheduleWithFixedDelay(() -> {
            IdleCounters idle = self.get();
            if (idle == null) {
                turn[0].cancel(false);
                release(released);
                return;
            }
            idle.sweep(idle.timeSource.currentTimeMillis(), false);
        }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
        this.scheduled = turn[0];
    }

    /** Takes room for one counter of {@code weight} bytes, dropping counters that hold nothing if needed. */
    boolean reserve(long weight, long nowMillis) {
        if (nowMillis >= this.nextIdleSweepMillis) {
            sweep(nowMillis, false);
        }
        if (this.budget.tryAddCounter(weight)) {
            return true;
        }
        if (nowMillis >= this.nextFullSweepMillis) {
            sweep(nowMillis, false);
            return this.budget.tryAddCounter(weight);
        }
        return false;
    }

    /**
     * Drops the counters that hold nothing; one thread at a time, the others go on deciding.
     * @param nowMillis the backend's time now
     * @param wait whether to wait for a sweep under way, rather than leave it the work
     */
    void sweep(long nowMillis, boolean wait) {
        if (wait) {
            this.sweepLock.lock();
        }
        else if (!this.sweepLock.tryLock()) {
            return;
        }
        try {
            this.nextIdleSweepMillis = nowMillis + IDLE_SWEEP_MILLIS;
            this.nextFullSweepMillis = nowMillis + FULL_SWEEP_MILLIS;
            for (LimitCounters counters : this.limits.values()) {
                for (Map<String, WindowCounter> map : List.of(counters.counters, counters.digests)) {
                    map.forEach((key, counter) -> {
                        if (counter.retireIfEmpty(nowMillis) && map.remove(key, counter)) {
                            this.budget.releaseCounter(counters.weightOf(key) + counter.extraBytes());
                        }
                    });
                }
            }
        }
        finally {
            this.sweepLock.unlock();
        }
    }

    /** Leaves the sweeper's schedule. */
    @Override
    public void close() {
        this.scheduled.cancel(false);
        release(this.released);
    }

    /** The shared sweeper, started for the first open store. */
    private static synchronized ScheduledExecutorService openSweeper() {
        if (sweeper == null) {
            sweeper = Executors.newSingleThreadScheduledExecutor((task) -> {
                Thread thread = new Thread(task, "limiter-local-sweeper");
                thread.setDaemon(true);
                return thread;
            });
        }
        openStores++;
        return sweeper;
    }

    /** Gives a store's turn back, once; the last one stops the sweeper's thread. */
    private static synchronized void release(AtomicBoolean released) {
        if (released.compareAndSet(false, true) && --openStores == 0) {
            sweeper.shutdownNow();
            sweeper = null;
        }
    }

    /** @return the stores that hold a turn on the shared sweeper: for tests of its thread's life */
    static synchronized int openStores() {
        return openStores;
    }

}
