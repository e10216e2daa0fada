package io.slidinglimiter.jdbc;

import java.sql.SQLTransientConnectionException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * Single-limit acquisitions that wait for one another, sent as one upsert.
 * <p>
 * The backend keeps at most {@link #IN_FLIGHT} of these upserts running. A decision that comes while
 * they run waits; when one ends, what waits goes in as few statements as the rules allow, each sent
 * by the first of its callers on that caller's own thread: no thread of the limiter's, no hop. A
 * decision that finds fewer upserts running goes alone at once, as it did before batching: no timer,
 * no wait when there is nothing to wait for.
 * <p>
 * An upsert reaches a row once. So the keys that wait once go together, up to {@link #MAX_BATCH} in
 * one upsert ({@link CounterTable#acquireMany()}), and the calls of a key that waits more than once
 * go as one statement of their own ({@link CounterTable#acquireEach()}: one row lock, the calls
 * decided in turn, one write). A key has one statement in flight at a time: a call of a key whose
 * statement runs waits for it, even with fewer upserts running, and goes with the key's other
 * waiting calls when it ends. A hot key's calls so cost the database one statement at a time, and
 * never queue on its row lock there (where a wait past {@code lock_timeout} would fail them).
 * <p>
 * Each decision keeps its own deadline (taken when it came) and its own reply: a row the database
 * reaches after its deadline changes nothing and fails that decision alone; a statement that fails
 * fails each of its decisions with the same cause. A statement the database answered nothing for
 * (ended by the timeout, or no connection in time) fails what waits behind it at once, with the same
 * cause, so that a decision waits for a silent database no longer than without batching.
 */
final class UpsertBatches {

    /**
     * The upserts running at once before decisions wait: four, so that a statement waiting for a row
     * another session holds leaves three, and a database on two cores stays busy while replies are read.
     */
    static final int IN_FLIGHT = 4;

    /** The most decisions one statement makes. */
    static final int MAX_BATCH = 64;

    /** The statements the decisions go in. */
    interface Upserts {

        /**
         * Acquires one limit by itself, its time and deadline taken as the statement goes.
         * @param request the limit, key and cost
         * @return the decision
         * @throws RuntimeException ({@link JdbcBackendException}) when it could not be made
         */
        Decisions alone(LimitRequest request);

        /**
         * Acquires several limits of distinct keys in one statement.
         * @param requests the limits, keys and costs
         * @param fixedNow each one's time, or nulls for the database's
         * @param deadlines each one's deadline, or nulls
         * @return each one's decision, null where the database reached it after its deadline
         * @throws RuntimeException ({@link JdbcBackendException}) when the statement failed
         */
        Decisions[] together(List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines);

        /**
         * Acquires one limit of one key for several calls in turn, in one statement.
         * @param requests the calls: one limit, one key, their costs
         * @param fixedNow the time of every call, or null for the database's
         * @param deadlines each call's deadline, or nulls
         * @return each call's decision, null where the database reached it after its deadline
         * @throws RuntimeException ({@link JdbcBackendException}) when the statement failed
         */
        Decisions[] each(List<LimitRequest> requests, Long fixedNow, Long[] deadlines);

    }

    private final Upserts upserts;

    /** Whether a failure is the database's answer (a lock wait, a constraint), not its silence. */
    private final Predicate<Throwable> answered;

    /** A decision's time and deadline when it comes: a test's time, or the database's with a deadline. */
    private final StatementClock clock;

    /**
     * How long a decision waits for its turn before it fails as the pool's exhaustion would: the
     * statements before it each end within the backend's bounds, so only a fault here reaches it.
     */
    private final long turnWaitNanos;

    private final ReentrantLock lock = new ReentrantLock();

    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

    private int inFlight;

    /** The keys ({@link #keyOf(LimitRequest)}) of the statements in flight. */
    private final HashSet<String> keysInFlight = new HashSet<>();

    /** The statements sent for more than one decision. */
    private final LongAdder batches = new LongAdder();

    /** The decisions those statements carried. */
    private final LongAdder batchedDecisions = new LongAdder();

    private volatile boolean enabled = true;

    UpsertBatches(Upserts upserts, Predicate<Throwable> answered, StatementClock clock, long turnWaitMillis) {
        this.upserts = upserts;
        this.answered = answered;
        this.clock = clock;
        this.turnWaitNanos = TimeUnit.MILLISECONDS.toNanos(turnWaitMillis);
    }

    void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the statements sent for more than one decision, and the decisions they carried */
    long[] counts() {
        return new long[] { this.batches.sum(), this.batchedDecisions.sum() };
    }

    /** @return the decisions waiting for their turn now */
    int waiting() {
        this.lock.lock();
        try {
            return this.waiting.size();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Acquires one sliding-window-counter limit: alone now when fewer than {@link #IN_FLIGHT} upserts
     * run (or batching is off), else with the others waiting when one of them ends.
     * @param request the limit, key and cost
     * @return the decision
     */
    Decisions acquire(LimitRequest request) {
        if (!this.enabled) {
            return this.upserts.alone(request);
        }
        Waiting mine = null;
        String key = keyOf(request);
        this.lock.lock();
        try {
            if (this.inFlight < IN_FLIGHT && this.keysInFlight.add(key)) {
                this.inFlight++;
            }
            else {
                mine = new Waiting(request, key, this.clock.now(), this.clock.deadline(), new CompletableFuture<>());
                this.waiting.add(mine);
            }
        }
        finally {
            this.lock.unlock();
        }
        if (mine == null) {
            return sent(() -> this.upserts.alone(request), List.of(key));
        }
        Object outcome = turnOf(mine);
        if (outcome instanceof Statement statement) {
            return sent(() -> send(statement), statement.keys());
        }
        return (Decisions) outcome;
    }

    /** A request's limit and key, as the lane tells statements of one row apart. */
    private static String keyOf(LimitRequest request) {
        return request.limit().name() + '\0' + request.key();
    }

    /** Runs an upsert counted in flight, of these keys, then lets what waits go, or fail with it. */
    private Decisions sent(Supplier<Decisions> upsert, List<String> keys) {
        RuntimeException failure = null;
        try {
            return upsert.get();
        }
        catch (RuntimeException ex) {
            failure = ex;
            throw ex;
        }
        finally {
            ended(failure, keys);
        }
    }

    /**
     * Waits for a decision's outcome: its reply, or the statement it is first in, which its caller
     * sends. A caller that stops waiting (too long, or interrupted) leaves only while its decision
     * still waits; once in a statement, its outcome comes within that statement's bounds, and a
     * statement handed to it is sent by it, so that no decision waits for a caller that left.
     * @throws RuntimeException its failure
     */
    private Object turnOf(Waiting mine) {
        try {
            return mine.outcome.get(this.turnWaitNanos, TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            if (left(mine)) {
                throw new JdbcBackendException("PostgreSQL could not acquire: the limiter's statements before this"
                        + " decision did not end within " + TimeUnit.NANOSECONDS.toMillis(this.turnWaitNanos) + " ms",
                        new SQLTransientConnectionException("no turn to decide", "08001"));
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            if (left(mine)) {
                throw new JdbcBackendException("Interrupted while waiting to decide", ex);
            }
        }
        catch (ExecutionException ex) {
            throw failureOf(ex.getCause());
        }
        try {
            return mine.outcome.join();
        }
        catch (CompletionException ex) {
            throw failureOf(ex.getCause());
        }
    }

    /** Takes a waiting decision out of the queue, if it is still there. */
    private boolean left(Waiting mine) {
        this.lock.lock();
        try {
            return this.waiting.remove(mine);
        }
        finally {
            this.lock.unlock();
        }
    }

    private static RuntimeException failureOf(Throwable failure) {
        return (failure instanceof RuntimeException runtime) ? runtime
                : new JdbcBackendException("PostgreSQL could not acquire", failure);
    }

    /**
     * An upsert ended: what waits goes now, each statement handed to its first caller to send; or,
     * when the database answered it nothing, fails with its failure.
     */
    private void ended(RuntimeException failure, List<String> keys) {
        boolean unanswered = failure != null && !this.answered.test(failure);
        List<Waiting> failing = null;
        List<Statement> statements = List.of();
        this.lock.lock();
        try {
            this.inFlight--;
            this.keysInFlight.removeAll(keys);
            if (unanswered) {
                failing = new ArrayList<>(this.waiting);
                this.waiting.clear();
            }
            else {
                statements = drain();
                this.inFlight += statements.size();
            }
        }
        finally {
            this.lock.unlock();
        }
        if (failing != null) {
            // The database answered nothing for the timeout (or gave no connection): what waited behind
            // that statement follows its policy now, as the statement's caller does, instead of
            // waiting a timeout more in a statement of its own.
            for (Waiting waiting : failing) {
                waiting.outcome.completeExceptionally(failure);
            }
        }
        for (Statement statement : statements) {
            statement.calls.get(0).outcome.complete(statement);
        }
    }

    /**
     * Takes what waits as the statements to send: the calls of a key that waits more than once, one
     * statement per key (its calls in the order they came), and the other keys' calls together, up to
     * {@link #MAX_BATCH} a statement. The calls of a key with a statement in flight, and a call of a key
     * whose limit changed while others of it wait, stay, first in line, for the next drain. Marks the
     * keys sent as in flight. Holding the lock.
     */
    private List<Statement> drain() {
        if (this.waiting.isEmpty()) {
            return List.of();
        }
        Map<String, List<Waiting>> keys = new LinkedHashMap<>();
        List<Waiting> stays = null;
        Waiting next;
        while ((next = this.waiting.poll()) != null) {
            List<Waiting> same = keys.get(next.key);
            if (this.keysInFlight.contains(next.key)
                    || (same != null && !same.get(0).request.limit().equals(next.request.limit()))) {
                if (stays == null) {
                    stays = new ArrayList<>();
                }
                stays.add(next);
                continue;
            }
            if (same == null) {
                same = new ArrayList<>();
                keys.put(next.key, same);
            }
            same.add(next);
        }
        if (stays != null) {
            for (int i = stays.size() - 1; i >= 0; i--) {
                this.waiting.addFirst(stays.get(i));
            }
        }
        List<Statement> statements = new ArrayList<>();
        List<Waiting> together = null;
        for (List<Waiting> key : keys.values()) {
            this.keysInFlight.add(key.get(0).key);
            if (key.size() > 1) {
                // Up to MAX_BATCH now; the key's further calls go when this statement ends.
                statements.add(new Statement(key.subList(0, Math.min(key.size(), MAX_BATCH)), true));
                for (int i = key.size() - 1; i >= MAX_BATCH; i--) {
                    this.waiting.addFirst(key.get(i));
                }
                continue;
            }
            if (together == null || together.size() == MAX_BATCH) {
                together = new ArrayList<>();
                statements.add(new Statement(together, false));
            }
            together.add(key.get(0));
        }
        return statements;
    }

    /**
     * Sends a statement's decisions, completes each but the first (this caller's) with its reply or
     * failure, and returns the first one's.
     */
    private Decisions send(Statement statement) {
        List<Waiting> calls = statement.calls;
        Waiting first = calls.get(0);
        if (calls.size() == 1) {
            return this.upserts.alone(first.request);
        }
        int size = calls.size();
        List<LimitRequest> requests = new ArrayList<>(size);
        Long[] fixed = new Long[size];
        Long[] deadlines = new Long[size];
        for (int i = 0; i < size; i++) {
            Waiting waiting = calls.get(i);
            requests.add(waiting.request);
            fixed[i] = waiting.fixedNow;
            deadlines[i] = waiting.deadline;
        }
        this.batches.increment();
        this.batchedDecisions.add(size);
        Decisions[] decided;
        try {
            // One key's calls decide at its first call's time (only tests hand one).
            decided = statement.oneKey ? this.upserts.each(requests, fixed[0], deadlines)
                    : this.upserts.together(requests, fixed, deadlines);
        }
        catch (RuntimeException | Error ex) {
            for (int i = 1; i < size; i++) {
                calls.get(i).outcome.completeExceptionally(ex);
            }
            throw ex;
        }
        for (int i = 1; i < size; i++) {
            if (decided[i] != null) {
                calls.get(i).outcome.complete(decided[i]);
            }
            else {
                calls.get(i).outcome.completeExceptionally(StatementClock.afterDeadline());
            }
        }
        if (decided[0] == null) {
            throw StatementClock.afterDeadline();
        }
        return decided[0];
    }

    /**
     * The calls one statement decides: of one limit and key ({@link Upserts#each}), or of distinct
     * ones ({@link Upserts#together}).
     */
    private record Statement(List<Waiting> calls, boolean oneKey) {

        /** The keys it decides: its calls' one key, or each call's. */
        List<String> keys() {
            if (this.oneKey) {
                return List.of(this.calls.get(0).key);
            }
            List<String> keys = new ArrayList<>(this.calls.size());
            for (Waiting call : this.calls) {
                keys.add(call.key);
            }
            return keys;
        }

    }

    /**
     * A decision waiting for its turn: its outcome is its reply, or the statement it is first in, which
     * its caller sends.
     */
    private record Waiting(LimitRequest request, String key, Long fixedNow, Long deadline,
            CompletableFuture<Object> outcome) {
    }

}
