package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
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
 * <p>
 * A statement given up on is first cancelled, on a thread of the watch's own ({@link StatementCancel}):
 * a database that is alive (slow, or busy with others) ends it at once with an error, its connection
 * intact, so the pool logs no broken connection for the limiter's patience. Only a statement the
 * cancel did not end in time (four timeouts after it was sent) has its connection aborted: the
 * database answers nothing, and that connection is broken indeed. A database that answers nothing
 * thus holds a caller up to five timeouts, until the breaker opens; a live one on a busy host keeps
 * its connections.
 */
final class StatementWatch implements AutoCloseable {

    /** The most cancels waiting to be sent; past them a statement given up on has its connection aborted. */
    private static final int CANCELS_QUEUED = 16;

    private final long timeoutNanos;

    private final long maxWaitNanos;

    private final ConcurrentHashMap<Watched, Statement> inFlight = new ConcurrentHashMap<>();

    /** Statements given up on and cancelled, whose connection is aborted if they have not ended in time. */
    private final Set<Watched> cancelled = ConcurrentHashMap.newKeySet();

    private final ScheduledExecutorService watcher;

    /**
     * Sends cancels, each of which opens a connection of its own to the server: a few at a time, never
     * blocking the watch (a cancel not sent is an abort).
     */
    private final ThreadPoolExecutor canceller;

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
        this.canceller = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(CANCELS_QUEUED),
                (task) -> {
                    Thread thread = new Thread(task, "limiter-jdbc-statement-cancel");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /**
     * Watches a statement about to be sent.
     * @param connection its connection
     * @param statement the statement
     * @return what {@link #end} takes
     */
    Watched begin(Connection connection, Statement statement) {
        Watched watched = new Watched(System.nanoTime(), connection);
        this.inFlight.put(watched, statement);
        return watched;
    }

    /**
     * The statement ended, with a reply or an error.
     * @param watched what {@link #begin} gave
     * @param replied whether the database replied (an error reply too): it answers
     */
    void end(Watched watched, boolean replied) {
        this.inFlight.remove(watched);
        this.cancelled.remove(watched);
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
        // A statement the cancel did not end in time: the database answers nothing.
        for (Watched each : this.cancelled) {
            if (each.isOverdue(now, this.timeoutNanos) && this.cancelled.remove(each)) {
                abort(each.connection);
            }
        }
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
        for (Map.Entry<Watched, Statement> each : this.inFlight.entrySet()) {
            Watched watched = each.getKey();
            if (now - watched.sentNanos > patience && this.inFlight.remove(watched) != null) {
                watched.silent = silent;
                watched.givenUpNanos = now;
                watched.aborted = true;
                giveUp(watched, each.getValue());
            }
        }
    }

    /** Cancels a statement given up on; its connection is aborted if that does not end it in time. */
    private void giveUp(Watched watched, Statement statement) {
        this.cancelled.add(watched);
        try {
            this.canceller.execute(() -> {
                watched.cancelSentNanos = System.nanoTime();
                StatementCancel.cancel(watched.connection, statement);
            });
        }
        catch (RejectedExecutionException ex) {
            if (this.cancelled.remove(watched)) {
                abort(watched.connection);
            }
        }
    }

    private static void abort(Connection connection) {
        try {
            connection.abort(Runnable::run);
        }
        catch (SQLException | RuntimeException ex) {
            // Closed meanwhile: its caller has its answer.
        }
    }

    @Override
    public void close() {
        this.watcher.shutdownNow();
        this.canceller.shutdownNow();
    }

    /** One statement in flight. */
    static final class Watched {

        private final long sentNanos;

        private final Connection connection;

        /** When the watch gave it up; the watch's thread only. */
        private long givenUpNanos;

        /** When the cancel's thread began to send the cancel; 0 before. */
        private volatile long cancelSentNanos;

        /**
         * Whether the watch gave it up (cancelled it, or aborted its connection): the database answered
         * nothing for the timeout, or it for max-wait.
         */
        volatile boolean aborted;

        /**
         * Whether the watch ended it because the database answered no statement for the timeout; else it
         * waited max-wait while the database answered others. Written before {@link #aborted}.
         */
        volatile boolean silent;

        Watched(long sentNanos, Connection connection) {
            this.sentNanos = sentNanos;
            this.connection = connection;
        }

        /**
         * Whether the cancel did not end the statement in time, so that its connection is aborted: four
         * timeouts after the cancel was sent (or, while this JVM has not sent it yet, behind other
         * cancels or on a busy host, after the statement was given up). A live database ends a
         * cancelled statement at once, but its answer to the cancel, which opens a connection of its
         * own, takes a while on a busy host: at a single timeout, connections of a live database
         * were aborted and logged as broken.
         */
        boolean isOverdue(long now, long timeoutNanos) {
            long sent = this.cancelSentNanos;
            return now - ((sent != 0) ? sent : this.givenUpNanos) >= 4 * timeoutNanos;
        }

    }

}
