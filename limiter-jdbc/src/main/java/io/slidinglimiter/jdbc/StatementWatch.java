package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Ends a statement whose reply is late only while the database answers nothing.
 * <p>
 * A slow application is not a down database: while the limiter's other statements keep completing
 * (one did within the timeout), a statement whose own reply is late (this JVM's threads, or the
 * database's queue, are busy) waits for it, up to {@code maxWait}. Once a statement has waited the
 * timeout and none completed for as long, the database is answering nothing: its connection is
 * aborted at once, which ends the wait with an error that the failure policy decides; one that waited
 * {@code maxWait} is ended whatever the others do. A thread of its own looks every quarter of the
 * timeout, and counts the database's silence only while it was awake itself: a pause of this JVM
 * (a collection, a host that kept its threads from running) is not the database's. A database kept
 * from answering by a busy host looks silent too: whether it failed, {@link AnswerCheck} tells after.
 */
final class StatementWatch implements AutoCloseable {

    private final long timeoutNanos;

    private final long maxWaitNanos;

    private final ConcurrentHashMap<Watched, Connection> inFlight = new ConcurrentHashMap<>();

    private final ScheduledExecutorService watcher;

    /** When a statement of the limiter's last completed, {@link System#nanoTime()}. */
    private volatile long answeredNanos = System.nanoTime() - Long.MAX_VALUE / 2;

    private final long periodNanos;

    /** The watch's last look, and how long the database was silent while it looked; the watch's thread only. */
    private long lookedNanos = System.nanoTime();

    private long silentNanos;

    StatementWatch(long timeoutMillis, long maxWaitMillis) {
        this.timeoutNanos = timeoutMillis * 1_000_000L;
        this.maxWaitNanos = maxWaitMillis * 1_000_000L;
        this.watcher = Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(task, "limiter-jdbc-statement-watch");
            thread.setDaemon(true);
            return thread;
        });
        long period = Math.max(1, timeoutMillis / 4);
        this.periodNanos = period * 1_000_000L;
        this.watcher.scheduleWithFixedDelay(this::look, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Watches a statement about to be sent.
     * @param connection its connection
     * @return what {@link #end} takes
     */
    Watched begin(Connection connection) {
        Watched watched = new Watched(System.nanoTime());
        this.inFlight.put(watched, connection);
        return watched;
    }

    /**
     * The statement ended, with a reply or an error.
     * @param watched what {@link #begin} gave
     * @param replied whether the database replied (an error reply too): it answers
     */
    void end(Watched watched, boolean replied) {
        this.inFlight.remove(watched);
        if (replied) {
            answered();
        }
    }

    /** Notes that the database answered a statement. */
    void answered() {
        this.answeredNanos = System.nanoTime();
    }

    /**
     * @param sinceNanos a time of {@link System#nanoTime()}
     * @return whether the database answered a statement of the limiter's after that time
     */
    boolean answeredSince(long sinceNanos) {
        return this.answeredNanos - sinceNanos > 0;
    }

    /** @return whether statements of the limiter's are in flight now: they hold connections of the pool */
    boolean isBusy() {
        return !this.inFlight.isEmpty();
    }

    private void look() {
        long now = System.nanoTime();
        // Silence counts up to two periods per look: a look later than that was this JVM's pause.
        long sinceLook = Math.min(now - this.lookedNanos, 2 * this.periodNanos);
        this.lookedNanos = now;
        this.silentNanos = (now - this.answeredNanos < sinceLook || this.inFlight.isEmpty()) ? 0
                : this.silentNanos + sinceLook;
        if (this.inFlight.isEmpty()) {
            return;
        }
        boolean silent = this.silentNanos >= this.timeoutNanos;
        long patience = silent ? this.timeoutNanos : this.maxWaitNanos;
        for (Map.Entry<Watched, Connection> each : this.inFlight.entrySet()) {
            if (now - each.getKey().sentNanos > patience && this.inFlight.remove(each.getKey()) != null) {
                each.getKey().silent = silent;
                each.getKey().aborted = true;
                try {
                    each.getValue().abort(Runnable::run);
                }
                catch (SQLException | RuntimeException ex) {
                    // Closed meanwhile: its caller has its answer.
                }
            }
        }
    }

    @Override
    public void close() {
        this.watcher.shutdownNow();
    }

    /** One statement in flight. */
    static final class Watched {

        private final long sentNanos;

        /** Whether the watch ended it: the database answered nothing for the timeout, or it for max-wait. */
        volatile boolean aborted;

        /**
         * Whether the watch ended it because the database answered no statement for the timeout; else it
         * waited max-wait while the database answered others. Written before {@link #aborted}.
         */
        volatile boolean silent;

        Watched(long sentNanos) {
            this.sentNanos = sentNanos;
        }

    }

}
