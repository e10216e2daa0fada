package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

/**
 * How the backend borrows a connection of the application's pool, never waiting for one, or for a
 * reply on it, past its timeout while the database answers nothing.
 * <p>
 * From Hikari's pool (Spring Boot's) a connection is asked for with the timeout itself, so that a pool
 * the application holds fails the decision to its failure policy in time, not after the pool's own
 * {@code connection-timeout} (30 s by default). A slow application is not a down database: while the
 * limiter's own statements hold the connections (none failed to open), a caller waits its turn, up to
 * {@code maxWait}, and so does a caller while the limiter's statements keep completing (the pool had
 * idle connections that this JVM's busy threads were not handed in time). A statement that the
 * database does not answer is ended by {@link StatementWatch}. Another pool waits as it was configured
 * to. On the connection, the reply is awaited likewise: at most {@code maxWait}, and no
 * longer than the timeout while the database answers nothing ({@link StatementWatch} ends the wait
 * by aborting the connection, which the pool then replaces).
 */
final class JdbcConnections {

    private static final boolean HIKARI = isPresent("com.zaxxer.hikari.HikariDataSource");

    private static final Logger logger = Logger.getLogger(JdbcConnections.class.getName());

    /**
     * The least time, in milliseconds, a database whose statement was ended has to answer a {@code SELECT 1}
     * before it is said to have failed; four timeouts when that is longer.
     */
    static final long ANSWER_GRACE_MILLIS = 1_000;

    /** Hikari's least {@code validation-timeout}, in milliseconds. */
    static final long LEAST_VALIDATION_MILLIS = 250;

    /** What a statement ended at max-wait while the database answered others says: it did not fail. */
    private static final Supplier<CompletionStage<Boolean>> ANSWERING = () -> CompletableFuture.completedFuture(false);

    private final DataSource dataSource;

    private final int timeoutMillis;

    private final long maxWaitNanos;

    /**
     * {@code lock_timeout} for the database: three quarters of the timeout, so that a wait for another
     * session's row lock ends with the database's own answer before the socket stops waiting.
     */
    private final long lockWaitMillis;

    private final String lockWait;

    /** Ends a statement whose reply is late while the database answers nothing. */
    private final StatementWatch watch;

    /** Tells, once the watch ended a statement, whether the database failed or answered late. */
    private final AnswerCheck answerCheck;

    /** Hikari's pool behind the data source, once it is started; null for another pool or before. */
    private volatile HikariPool hikariPool;

    /** Whether the pool behind the data source was looked for (it is once a first connection came). */
    private volatile boolean poolKnown;

    JdbcConnections(DataSource dataSource, long timeoutMillis, long maxWaitMillis) {
        this.dataSource = dataSource;
        this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeoutMillis));
        this.maxWaitNanos = Math.max(this.timeoutMillis, maxWaitMillis) * 1_000_000L;
        this.lockWaitMillis = Math.max(1, this.timeoutMillis * 3L / 4);
        this.lockWait = this.lockWaitMillis + "ms";
        this.watch = new StatementWatch(this.timeoutMillis, this.maxWaitNanos / 1_000_000);
        this.answerCheck = new AnswerCheck(this::selectOne, Math.max(ANSWER_GRACE_MILLIS, 4L * this.timeoutMillis));
        warnOfLongValidation(dataSource, this.timeoutMillis);
    }

    /**
     * Hikari checks a connection idle for over half a second before it hands it over, for up to its
     * {@code validation-timeout} (5 s by default), on the borrowing thread, where the limiter cannot
     * end the wait: while the database answers nothing, a decision waits that long for its policy.
     */
    private static void warnOfLongValidation(DataSource dataSource, long timeoutMillis) {
        long validationMillis = HIKARI ? HikariPools.validationTimeoutOf(dataSource) : 0;
        if (validationMillis > Math.max(timeoutMillis, LEAST_VALIDATION_MILLIS)) {
            logger.log(Level.WARNING, () -> "spring.datasource.hikari.validation-timeout (" + validationMillis
                    + " ms) is longer than limiter.jdbc.timeout (" + timeoutMillis + " ms): while PostgreSQL answers"
                    + " nothing, Hikari checks a connection that was idle for over half a second for up to "
                    + validationMillis + " ms before it hands it over, and the rate limiter's decision waits that"
                    + " long before its limiter.jdbc.on-failure policy decides. Set"
                    + " spring.datasource.hikari.validation-timeout=" + Math.max(timeoutMillis, LEAST_VALIDATION_MILLIS)
                    + " (milliseconds; Hikari's least is " + LEAST_VALIDATION_MILLIS + ").");
        }
    }

    /** @return the watch of this backend's statements in flight */
    StatementWatch watch() {
        return this.watch;
    }

    /** Stops watching statements. */
    void close() {
        this.watch.close();
    }

    /** @return the longest a caller waits for a connection or a reply while the database answers */
    long maxWaitMillis() {
        return this.maxWaitNanos / 1_000_000;
    }

    /** @return {@code lock_timeout}'s value, {@link #lockWaitMillis()} as the setting writes it */
    String lockWait() {
        return this.lockWait;
    }

    /** @return the longest wait for another session's row lock: three quarters of the timeout */
    long lockWaitMillis() {
        return this.lockWaitMillis;
    }



    /** @return the longest wait for a connection, or for a reply on it, in milliseconds */
    int timeoutMillis() {
        return this.timeoutMillis;
    }

    /**
     * A connection of the pool, for statements run by {@link #run}.
     * @return the connection, to be closed by the caller
     * @throws SQLException when none came within the timeout, or the database cannot be reached
     */
    Connection open() throws SQLException {
        HikariPool pool = this.hikariPool;
        return (pool != null) ? fromPool(pool) : openFirst();
    }

    /** A connection of Hikari's pool within the timeout, or within {@code maxWait} while decisions hold them. */
    private Connection fromPool(HikariPool pool) throws SQLException {
        long startNanos = System.nanoTime();
        while (true) {
            try {
                return pool.getConnection(this.timeoutMillis);
            }
            catch (SQLTransientConnectionException ex) {
                // The limiter's own decisions hold the connections, or gave them back while this thread waited
                // (the pool's idle connections were not handed over in time: this JVM's threads did not run): a
                // busy application, not a down database.
                boolean busyWithDecisions = ex.getCause() == null
                        && (this.watch.isBusy() || this.watch.answeredSince(startNanos));
                if (!busyWithDecisions || System.nanoTime() - startNanos >= this.maxWaitNanos) {
                    throw isExhausted(pool, ex) ? exhausted(pool, ex) : ex;
                }
            }
        }
    }

    /**
     * Whether the pool gave no connection because it holds as many as it may and all are in use: not
     * because it could not open one (a database out of reach or stalled leaves the pool short of
     * connections, with nothing in use to wait for).
     */
    private static boolean isExhausted(HikariPool pool, SQLTransientConnectionException ex) {
        int total = pool.getTotalConnections();
        return ex.getCause() == null && total > 0 && total >= HikariPools.maximumPoolSizeOf(pool)
                && pool.getActiveConnections() >= total;
    }

    /**
     * The pool had no connection to give (none failed to open): every one was in use, by the application
     * or by the limiter. Not the database's failure but this application's overload, as a slow call is:
     * no breaker opens, no outage starts, and the failure names the pool, not the database.
     */
    private UnansweredStatementException exhausted(HikariPool pool, SQLTransientConnectionException ex) {
        return new UnansweredStatementException("the application's connection pool had no connection free within "
                + this.timeoutMillis + " ms (limiter.jdbc.timeout): " + pool.getActiveConnections() + " of "
                + pool.getTotalConnections() + " in use, " + pool.getThreadsAwaitingConnection() + " threads waiting;"
                + " the limiter borrows the application's connections, so give the pool room for its statements"
                + " (spring.datasource.hikari.maximum-pool-size)", UnansweredStatementException.POOL_EXHAUSTED, ex,
                ANSWERING);
    }

    /** A connection from the data source itself, which starts a Hikari pool that was not yet. */
    private Connection openFirst() throws SQLException {
        Connection connection = this.dataSource.getConnection();
        if (!this.poolKnown) {
            this.hikariPool = HIKARI ? HikariPools.of(this.dataSource) : null;
            this.poolKnown = true;
        }
        return connection;
    }

    /**
     * Runs a statement on a connection of {@link #open()}, watched ({@link StatementWatch}), then
     * commits if the pool hands out connections without auto-commit. A statement the watch gave up on
     * is cancelled (or its connection aborted, when the database answers nothing), and its connection
     * leaves the pool once closed; a reply that came before the cancel stands.
     * @param connection the connection
     * @param statement the statement the work runs, which the watch cancels if it gives it up
     * @param call the statement's work
     * @param <T> what it returns
     * @return what the work returned
     * @throws SQLException as the driver threw it; for a statement the watch ended, an
     * {@link UnansweredStatementException} (SQLSTATE 08006, or 57014 when the database answered others)
     */
    <T> T run(Connection connection, Statement statement, Call<T> call) throws SQLException {
        StatementWatch.Watched watched = this.watch.begin(connection, statement);
        boolean replied = false;
        try {
            T result = call.run();
            commitIfAsked(connection);
            replied = true;
            return result;
        }
        catch (SQLException ex) {
            if (watched.aborted && watched.silent) {
                // Whether the database failed is asked of it only when someone reads the answer.
                throw new UnansweredStatementException("PostgreSQL answered nothing for " + this.timeoutMillis
                        + " ms", UnansweredStatementException.SILENT, ex, this.answerCheck::databaseFailed);
            }
            if (watched.aborted) {
                throw new UnansweredStatementException("PostgreSQL answered this statement nothing for "
                        + this.maxWaitNanos / 1_000_000 + " ms (limiter.jdbc.max-wait) while it answered others",
                        UnansweredStatementException.CANCELLED, ex, ANSWERING);
            }
            String state = ex.getSQLState();
            replied = state != null && !state.startsWith("08");
            throw ex;
        }
        finally {
            this.watch.end(watched, replied);
            if (watched.aborted) {
                // Cancelled: a cancel still on its way must not end another statement on this connection.
                retire(connection);
            }
        }
    }

    /**
     * Takes a connection out of Hikari's pool once its caller closes it, quietly (no broken connection
     * logged): a connection whose statement the watch cancelled. Another pool's connection is aborted.
     */
    private void retire(Connection connection) {
        HikariPool pool = this.hikariPool;
        try {
            if (pool != null) {
                pool.evictConnection(connection);
            }
            else {
                connection.abort(Runnable::run);
            }
        }
        catch (SQLException | RuntimeException ex) {
            // Closed already.
        }
    }

    /**
     * Sends {@code SELECT 1} on a connection of the pool, watched: a probe, and the {@link AnswerCheck}'s question.
     * @throws SQLException when the database does not answer it
     */
    void selectOne() throws SQLException {
        try (Connection connection = open(); Statement statement = connection.createStatement()) {
            run(connection, statement, () -> statement.execute("SELECT 1"));
        }
    }

    /**
     * A statement's work.
     * @param <T> what it returns
     */
    @FunctionalInterface
    interface Call<T> {

        T run() throws SQLException;

    }

    /**
     * Commits on a connection the pool hands out without auto-commit: the limiter's statements are
     * each a transaction of their own.
     * @param connection a connection of {@link #open()}
     * @throws SQLException when the commit fails
     */
    static void commitIfAsked(Connection connection) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.commit();
        }
    }

    /** @return whether a class is on the class path: an optional dependency's */
    static boolean isPresent(String className) {
        try {
            Class.forName(className, false, JdbcConnections.class.getClassLoader());
            return true;
        }
        catch (ClassNotFoundException | LinkageError ex) {
            return false;
        }
    }

    /** Hikari's types, loaded only when Hikari is there. */
    private static final class HikariPools {

        /** @return the pool's {@code validation-timeout} in milliseconds, or 0 for another data source */
        static long validationTimeoutOf(DataSource dataSource) {
            try {
                HikariDataSource hikari = hikariOf(dataSource);
                return (hikari != null) ? hikari.getValidationTimeout() : 0;
            }
            catch (SQLException ex) {
                return 0;
            }
        }

        /** @return the most connections the pool may hold */
        static int maximumPoolSizeOf(HikariPool pool) {
            return pool.config.getMaximumPoolSize();
        }

        static HikariPool of(DataSource dataSource) throws SQLException {
            HikariDataSource hikari = hikariOf(dataSource);
            return (hikari != null && hikari.getHikariPoolMXBean() instanceof HikariPool pool) ? pool : null;
        }

        /** @return Hikari's data source behind this one, or null for another pool */
        private static HikariDataSource hikariOf(DataSource dataSource) throws SQLException {
            return dataSource.isWrapperFor(HikariDataSource.class) ? dataSource.unwrap(HikariDataSource.class) : null;
        }

    }

}
