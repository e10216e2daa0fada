package io.slidinglimiter.jdbc;

import java.sql.SQLException;

import io.slidinglimiter.failover.RemoteBackendException;

/**
 * The database could not decide: unreachable, too slow, out of connections, or failing the statement.
 */
public class JdbcBackendException extends RemoteBackendException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause the driver's or the pool's exception, or null
     */
    public JdbcBackendException(String message, Throwable cause) {
        super(message, cause);
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

}
