package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;

import javax.sql.DataSource;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.failover.LeaseGrant;
import io.slidinglimiter.failover.LeaseServer;
import io.slidinglimiter.failover.RemoteBackend;

/**
 * Counters in a PostgreSQL table, shared by every application instance: each decision is one
 * statement, a call of the table's {@code _decide} function, which reads the time from the database,
 * so instances with skewed clocks agree.
 * <p>
 * The function locks the call's rows (in one order, so that calls over several limits never
 * deadlock), decides all of them or none, and writes only what changed; the lock is held for the
 * statement alone, never across round trips. Rows are made on a key's first admission and deleted
 * once idle past their window ({@link #deleteIdle}). A decision borrows a connection of the
 * application's pool for the statement and waits for it, and for the reply, at most the timeout
 * ({@link JdbcConnections}); it runs in a transaction of its own, whatever transaction the calling
 * thread is in. A failure throws {@link JdbcBackendException}: wrap the backend in a
 * {@link io.slidinglimiter.failover.ResilientBackend} to decide by the failure policy instead.
 */
public final class JdbcBackend implements RemoteBackend, LeaseServer {

    /** The largest limit the function counts exactly: totals and charges stay far inside a bigint. */
    public static final long MAX_LIMIT = 1L << 53;

    /** The longest a decision waits for a connection its own decisions hold, or a reply while the database answers. */
    public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(2);

    /** The limit and key of the warm-up's read, which no application's limit is named. */
    private static final String WARM_UP_LIMIT = "limiter-warm-up";

    private static final String ACQUIRE = "acquire";

    private static final String PEEK = "peek";

    private static final String RESET = "reset";

    private static final String REFUND = "refund";

    private static final String SETTLE = "settle";

    private static final String LEASE = "lease";

    private final JdbcConnections connections;

    private final CounterTable table;

    /** Single-limit acquisitions that wait for the upserts in flight, sent together. */
    private final UpsertBatches batches;

    /** The times statements are handed: a test's, or the database's with a deadline. */
    private final StatementClock clock;

    /** Counts in the database what fallbacks admitted while it did not decide. */
    private final AdmissionReports reports;

    /** Where fallback admissions are counted and leases topped up, off the callers' threads. */
    private final ExecutorService background;

    /**
     * Creates the backend.
     * @param dataSource the application's data source: a PostgreSQL database holding the table
     * @param table the counters' table
     * @param timeout the longest a decision waits for a connection and for the database's reply
     */
    public JdbcBackend(DataSource dataSource, CounterTable table, Duration timeout) {
        this(dataSource, table, timeout, DEFAULT_MAX_WAIT, null);
    }

    /**
     * Creates the backend.
     * @param dataSource the application's data source: a PostgreSQL database holding the table
     * @param table the counters' table
     * @param timeout the longest a decision waits for a connection and for the database's reply
     * @param maxWait the longest a decision waits for a connection the limiter's own decisions hold, or
     * for its reply while the database answers others (the application is busy, not the database
     * down); the timeout when it is shorter
     */
    public JdbcBackend(DataSource dataSource, CounterTable table, Duration timeout, Duration maxWait) {
        this(dataSource, table, timeout, maxWait, null);
    }

    private JdbcBackend(DataSource dataSource, CounterTable table, Duration timeout, Duration maxWait,
            LongSupplier fixedTime) {
        this.connections = new JdbcConnections(dataSource, timeout.toMillis(), maxWait.toMillis());
        this.table = table;
        this.clock = new StatementClock(fixedTime, this.connections.maxWaitMillis());
        this.batches = new UpsertBatches(new CounterUpserts(this.connections, table, this.clock), this::answered,
                this.clock, this.connections.maxWaitMillis());
        this.background = Executors.newSingleThreadExecutor((task) -> {
            Thread thread = new Thread(task, "limiter-jdbc-background");
            thread.setDaemon(true);
            return thread;
        });
        this.reports = new AdmissionReports((requests, permits) -> call(SETTLE, 0L, 0, requests, permits),
                this::isLimitsOwn, this.background);
    }

    /**
     * A backend whose statements decide, refund, settle and peek at the time {@code clock} gives
     * instead of the database's: for tests that replay a schedule.
     * @param dataSource the data source
     * @param table the counters' table
     * @param timeout the longest wait
     * @param clock the time of every statement, in epoch milliseconds
     * @return the backend
     */
    public static JdbcBackend atTime(DataSource dataSource, CounterTable table, Duration timeout, LongSupplier clock) {
        return new JdbcBackend(dataSource, table, timeout, DEFAULT_MAX_WAIT, clock);
    }

    /** @return how its statements borrow connections and wait, which the run-time changes share */
    JdbcConnections connections() {
        return this.connections;
    }

    /** @return the counters' table */
    public CounterTable table() {
        return this.table;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        return tryAcquireAll(List.of(new LimitRequest(limit, key, cost))).get(0);
    }

    /**
     * {@inheritDoc}
     * <p>
     * One statement, whatever the number of limits.
     */
    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        if (requests.size() == 1 && requests.get(0).limit().algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) {
            return acquireOne(requests);
        }
        long[] reply = call(ACQUIRE, null, 0, requests, CounterStatements.costsOf(requests));
        if (reply[0] == -1) {
            throw StatementClock.afterDeadline();
        }
        this.clock.noteDecidedAt(reply[1]);
        return CounterStatements.decisions(reply, requests, reply[2 + 4 * requests.size()]);
    }

    /**
     * One sliding-window-counter limit, the common decision: one upsert ({@link CounterTable#acquireOne()}),
     * or a place in one with other callers' ({@link UpsertBatches}).
     */
    private Decisions acquireOne(List<LimitRequest> requests) {
        return this.batches.acquire(requests.get(0));
    }

    /**
     * Whether single-limit acquisitions that wait behind {@value UpsertBatches#IN_FLIGHT} upserts go
     * to the database together, one statement deciding each as if alone (on by default).
     * @param batching whether they do
     */
    public void setBatching(boolean batching) {
        this.batches.setEnabled(batching);
    }

    /**
     * @return the statements sent so far for more than one decision, and the decisions they carried
     */
    public long[] batchCounts() {
        return this.batches.counts();
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        call(REFUND, taken.decidedAtMillis(), taken.generation(), requests, CounterStatements.costsOf(requests));
    }

    /**
     * {@inheritDoc}
     * <p>
     * One statement for the limits charged other than their cost; none when all were charged it.
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        List<LimitRequest> changed = new ArrayList<>(requests.size());
        long[] differences = new long[requests.size()];
        for (int i = 0; i < requests.size(); i++) {
            if (charges[i] != requests.get(i).cost()) {
                differences[changed.size()] = charges[i] - requests.get(i).cost();
                changed.add(requests.get(i));
            }
        }
        if (!changed.isEmpty()) {
            call(SETTLE, taken.decidedAtMillis(), taken.generation(), changed,
                    java.util.Arrays.copyOf(differences, changed.size()));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * One statement, on {@code blocking} (a JDBC call blocks its thread), or on this thread when it is
     * null. A lease the database would take after its caller stopped waiting changes nothing.
     */
    @Override
    public CompletionStage<LeaseGrant> lease(LimitDefinition limit, String key, long cost, long wanted,
            Executor blocking) {
        if (blocking != null) {
            return CompletableFuture.supplyAsync(() -> lease(limit, key, cost, wanted, null), blocking)
                    .thenCompose((grant) -> grant);
        }
        List<LimitRequest> requests = List.of(new LimitRequest(limit, key, Math.max(1, cost)));
        try {
            long[] reply = call(LEASE, null, wanted, requests, new long[] { cost });
            if (reply[0] == -1) {
                throw StatementClock.afterDeadline();
            }
            this.clock.noteDecidedAt(reply[1]);
            Decision decision = CounterStatements.decisions(reply, requests, 0).get(0);
            return CompletableFuture.completedFuture(new LeaseGrant(decision, reply[6], reply[1], reply[7], reply[8]));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * A thread of the backend's own, which gives leases back too; the calling thread for a backend at
     * a test's fixed time, so that a replayed schedule stays one.
     */
    @Override
    public Executor topUps() {
        return this.clock.isFixed() ? Runnable::run : this.background;
    }

    /**
     * {@inheritDoc}
     * <p>
     * One statement, a refund of the unused permits at the lease's time and the row's generation then,
     * on the thread of {@link #topUps()}: no caller waits for it.
     */
    @Override
    public CompletionStage<?> giveBack(LimitDefinition limit, String key, LeaseGrant grant, long unused) {
        List<LimitRequest> requests = List.of(new LimitRequest(limit, key, unused));
        try {
            return CompletableFuture.runAsync(() -> call(REFUND, grant.decidedAtMillis(),
                    grant.counterCreatedAtMillis(), requests, new long[] { unused }), topUps());
        }
        catch (RejectedExecutionException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return usage(limit, key).decision();
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        return usage(limit, key, 1);
    }

    /**
     * {@inheritDoc}
     * <p>
     * One statement that locks and writes nothing.
     */
    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, key, cost));
        long[] reply = call(PEEK, null, 0, requests, new long[] { cost });
        return new KeyUsage(reply[2 + 4], CounterStatements.decisions(reply, requests, 0).get(0));
    }

    /**
     * Readies the backend before it serves: one read-only statement through the decide function, which
     * learns the database's clock (so that the first acquisitions carry their deadline, after which
     * they count nothing), opens a connection of the pool and has the database compile the function.
     * Without it, the first decisions of a cold application pay for all of that, and a statement the
     * limiter gave up on at its timeout could still count.
     * @throws JdbcBackendException when the database does not answer
     */
    public void warmUp() {
        LimitDefinition probe = LimitDefinition.of(WARM_UP_LIMIT, 1, Duration.ofSeconds(1), 1);
        long[] reply = call(PEEK, null, 0, List.of(new LimitRequest(probe, WARM_UP_LIMIT, 1)), new long[] { 1 });
        this.clock.noteDecidedAt(reply[1]);
    }

    /** @return whether statements are handed the database time after which an acquisition counts nothing */
    boolean knowsDeadlines() {
        return this.clock.deadline() != null;
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        call(RESET, null, 0, List.of(new LimitRequest(limit, key, 1)), new long[] { 1 });
    }

    /**
     * {@inheritDoc}
     * <p>
     * Deletes every row of the counters' table; the run-time limit changes stay.
     */
    @Override
    public void resetAll() {
        update("DELETE FROM " + this.table.name());
    }

    /**
     * Deletes rows idle past their window, a bounded number per statement: what a sweep does in the
     * background. Rows a decision holds now are left for the next sweep.
     * @param atMost the most rows deleted
     * @return the rows deleted
     */
    public int deleteIdle(int atMost) {
        try (Connection connection = this.connections.open();
                PreparedStatement statement = connection.prepareStatement(this.table.deleteExpired())) {
            CounterStatements.setLong(statement, 1, this.clock.now());
            statement.setInt(2, atMost);
            return this.connections.run(connection, statement, statement::executeUpdate);
        }
        catch (SQLException ex) {
            throw failure("delete idle counters", ex);
        }
    }

    /**
     * Whether the database answers within the timeout: a probe of an outage's end, which reads nothing
     * of the counters.
     * @return true
     * @throws JdbcBackendException when it does not
     */
    public boolean ping() {
        try {
            this.connections.selectOne();
            return true;
        }
        catch (SQLException ex) {
            throw failure("answer SELECT 1", ex);
        }
    }

    /** {@value #MAX_LIMIT}: far inside the bigint every count is held in. */
    @Override
    public long largestLimit(LimitDefinition limit) {
        return MAX_LIMIT;
    }

    @Override
    public String serverName() {
        return "PostgreSQL";
    }

    @Override
    public String propertyPrefix() {
        return "limiter.jdbc";
    }

    @Override
    public String shardOf(LimitDefinition limit, String key) {
        return "";
    }

    @Override
    public Set<String> shards() {
        return Set.of("");
    }

    /**
     * {@inheritDoc}
     * <p>
     * Up to {@value AdmissionReports#KEYS_PER_REPORT} keys per statement, on a thread of the backend's own;
     * a key the database cannot count is reported alone and dropped ({@link AdmissionReports}).
     */
    @Override
    public CompletionStage<List<Admitted>> countAdmitted(List<Admitted> admitted) {
        return this.reports.count(admitted);
    }

    /**
     * {@inheritDoc}
     * <p>
     * Also a number the database could not hold (SQLSTATE class 22, data exception), and a key's row
     * that another session held locked past the timeout (55P03, lock not available): the server
     * answers every other key.
     */
    @Override
    public boolean isLimitsOwn(Throwable failure) {
        if (RemoteBackend.super.isLimitsOwn(failure)) {
            return true;
        }
        String state = JdbcBackendException.sqlStateOf(failure);
        return state != null && (state.startsWith("22") || state.equals(JdbcBackendException.LOCK_NOT_AVAILABLE));
    }

    /**
     * {@inheritDoc}
     * <p>
     * A key's row that another session held locked past the lock wait (55P03).
     */
    @Override
    public boolean isContention(Throwable failure) {
        return JdbcBackendException.LOCK_NOT_AVAILABLE.equals(JdbcBackendException.sqlStateOf(failure));
    }

    /**
     * {@inheritDoc}
     * <p>
     * The database answered unless the failure is of the connection (SQLSTATE class 08, a broken or
     * timed-out socket, a pool that gave no connection), or the server is shutting down or starting
     * (57P01, 57P02, 57P03).
     */
    @Override
    public boolean answered(Throwable failure) {
        String state = JdbcBackendException.sqlStateOf(failure);
        return state != null && !JdbcBackendException.isOutOfReach(state);
    }

    @Override
    public void close() {
        this.background.shutdownNow();
        this.connections.close();
    }

    /**
     * Runs the decide function once.
     * @param operation what it does
     * @param atMillis its third argument: an acquisition's deadline, an undo's decision time
     * @param decidedIn the generation of the decision undone
     * @param requests the limits and keys
     * @param costs each request's cost, or what an undo changes
     * @return its reply
     */
    private long[] call(String operation, Long atMillis, long decidedIn, List<LimitRequest> requests, long[] costs) {
        try (Connection connection = this.connections.open()) {
            // An acquisition's (or a lease's) deadline counts from now, when the statement goes: a connection is
            // in hand.
            boolean takes = ACQUIRE.equals(operation) || LEASE.equals(operation);
            return CounterStatements.decide(this.connections, connection, this.table, operation, this.clock.now(),
                    takes ? this.clock.deadline() : atMillis, decidedIn, requests, costs);
        }
        catch (SQLException ex) {
            throw failure(operation, ex);
        }
    }

    private void update(String sql) {
        try (Connection connection = this.connections.open(); Statement statement = connection.createStatement()) {
            this.connections.run(connection, statement, () -> statement.executeUpdate(sql));
        }
        catch (SQLException ex) {
            throw failure(sql, ex);
        }
    }

    private JdbcBackendException failure(String what, SQLException ex) {
        return JdbcBackendException.of(what, this.table.name(), ex, this.connections.lockWaitMillis());
    }

}
