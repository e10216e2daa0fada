package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import org.postgresql.PGConnection;

/**
 * Asks the database to end a statement the limiter gave up on, keeping its connection.
 * <p>
 * PostgreSQL's driver cancels at the connection ({@link PGConnection#cancelQuery()}: a cancel request
 * on a socket of its own), which never holds the statement's own thread: {@link Statement#cancel()}
 * would, since that driver's statement waits for its cancel to complete before it returns, and a
 * cancel sent to a stalled server completes only at the driver's cancel timeout (10 s by default).
 * Another driver's statement is cancelled the standard way. A cancel that arrives after the statement
 * ended could end the connection's next one, so the connection leaves the pool once its statement
 * ends ({@link JdbcConnections}). Runs on the watch's own thread, never a caller's.
 */
final class StatementCancel {

    private static final boolean POSTGRESQL = JdbcConnections.isPresent("org.postgresql.PGConnection");

    private StatementCancel() {
    }

    /**
     * Sends the cancel; a failure to send it is left to the watch, which aborts what did not end.
     * @param connection the statement's connection, as the pool handed it out
     * @param statement the statement
     */
    static void cancel(Connection connection, Statement statement) {
        try {
            if (!POSTGRESQL || !PostgresCancel.cancel(connection)) {
                statement.cancel();
            }
        }
        catch (SQLException | RuntimeException ex) {
            // Ended meanwhile, or the server is out of reach: the watch aborts what did not end.
        }
    }

    /** The PostgreSQL driver's types, loaded only when the driver is there. */
    private static final class PostgresCancel {

        /** @return whether the connection is PostgreSQL's, and its cancel was sent */
        static boolean cancel(Connection connection) throws SQLException {
            if (!connection.isWrapperFor(PGConnection.class)) {
                return false;
            }
            connection.unwrap(PGConnection.class).cancelQuery();
            return true;
        }

    }

}
