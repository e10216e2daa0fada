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
 * database's queue, are busy) waits for it, up to the socket's hard cap ({@code maxWait}). Once a
 * statement has waited the timeout and none completed for as long, the database is answering nothing:
 * its connection is aborted at once, which ends the wait with an error that the failure policy
 * decides. A thread of its own looks every quarter of the timeout.
 */
final class StatementWatch implements AutoCloseable {

    private final long timeoutNanos;

    private final ConcurrentHashMap<Watched, Connection> inFlight = new ConcurrentHashMap<>();

    private final ScheduledExecutorService watcher;

    /** When a statement of the limiter's last completed, {@link System#nanoTime()}. */
    private volatile long answeredNanos = System.nanoTime() - Long.MAX_VALUE / 2;

    StatementWatch(long timeoutMillis) {
        this.timeoutNanos = timeoutMillis * 1_000_000L;
        this.watcher = Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(task, "limiter-jdbc-statement-watch");
            thread.setDaemon(true);
            return thread;
        });
        long period = Math.max(1, timeoutMillis / 4);
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

    /** @return whether a statement completed within the timeout: the database answers */
    boolean isAnswering() {
        return System.nanoTime() - this.answeredNanos <= this.timeoutNanos;
    }

    private void look() {
        if (this.inFlight.isEmpty() || isAnswering()) {
            return;
        }
        long now = System.nanoTime();
        for (Map.Entry<Watched, Connection> each : this.inFlight.entrySet()) {
            if (now - each.getKey().sentNanos > this.timeoutNanos && this.inFlight.remove(each.getKey()) != null) {
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

        /** Whether the watch ended it: the database answered nothing for the timeout. */
        volatile boolean aborted;

        Watched(long sentNanos) {
            this.sentNanos = sentNanos;
        }

    }

}
