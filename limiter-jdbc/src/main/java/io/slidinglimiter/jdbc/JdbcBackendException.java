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

}
