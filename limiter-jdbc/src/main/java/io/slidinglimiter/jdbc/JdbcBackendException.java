package io.slidinglimiter.jdbc;

import java.sql.SQLException;

import io.slidinglimiter.failover.RemoteBackendException;

/**
 * The database could not decide: unreachable, too slow, out of connections, or failing the statement.
 */
public class JdbcBackendException extends RemoteBackendException {

    private static final long serialVersionUID = 1L;

    /** SQLSTATE 55P03: a row lock waited for past {@code lock_timeout}. */
    static final String LOCK_NOT_AVAILABLE = "55P03";

    /**
     * @param message what failed
     * @param cause the driver's or the pool's exception, or null
     */
    public JdbcBackendException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * A statement's failure: what could not be done, on which table, the SQLSTATE and the driver's message.
     * <p>
     * A row lock waited for too long (55P03) gets a cause of its own that says what held the row and
     * what to do: the log names a limit's own failure by its deepest cause. A statement the watch ended
     * unanswered gives a {@link JdbcTimeoutException}.
     * @param what what could not be done: "acquire", "answer SELECT 1"
     * @param table the counters' table
     * @param ex the driver's exception
     * @param lockWaitMillis the statement's {@code lock_timeout}
     * @return the exception to throw
     */
    static JdbcBackendException of(String what, String table, SQLException ex, long lockWaitMillis) {
        SQLException cause = ex;
        if (LOCK_NOT_AVAILABLE.equals(ex.getSQLState())) {
            cause = new SQLException("a row of this key was locked for longer than its " + lockWaitMillis
                    + " ms lock wait (three quarters of limiter.jdbc.timeout): by another session's open transaction,"
                    + " or by this key's calls queueing for it (from several instances, or with"
                    + " limiter.jdbc.batching off); a key that hot is decided in memory with lease: true",
                    LOCK_NOT_AVAILABLE);
            cause.addSuppressed(ex);
        }
        String message = "PostgreSQL could not " + what + " (table " + table + ", SQLSTATE " + ex.getSQLState()
                + "): " + ex.getMessage();
        return (ex instanceof UnansweredStatementException unanswered)
                ? new JdbcTimeoutException(message, cause, unanswered.databaseFailed())
                : new JdbcBackendException(message, cause);
    }

    /**
     * The SQLSTATE of the failure, when the driver gave one.
     * @return its five characters, or null
     */
    public String sqlState() {
        return (getCause() instanceof SQLException sql) ? sql.getSQLState() : null;
    }

    /**
     * The SQLSTATE of a failure or of one of its causes.
     * @param failure what a statement failed with
     * @return its five characters, or null when no cause has one
     */
    static String sqlStateOf(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    /**
     * Whether a SQLSTATE says the database was not reached, rather than answered: a connection's failure
     * (class 08), a server shutting down or starting (57P01, 57P02, 57P03).
     * @param state a SQLSTATE
     * @return whether the database was out of reach
     */
    static boolean isOutOfReach(String state) {
        return state.startsWith("08") || state.startsWith("57P");
    }

}
