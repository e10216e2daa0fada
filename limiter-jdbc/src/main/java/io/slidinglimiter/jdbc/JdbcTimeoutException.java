package io.slidinglimiter.jdbc;

import java.util.concurrent.CompletionStage;

import io.slidinglimiter.failover.LateFailure;

/**
 * A statement PostgreSQL answered nothing for {@code limiter.jdbc.timeout}, while it answered no other
 * statement of the limiter's either.
 * <p>
 * The statement was ended; its decision follows the failure policy. Whether the database failed is
 * told by {@link #serverFailed()}: one that answers a {@code SELECT 1} sent next was only slow (a host
 * whose processors something else keeps busy, a queue of statements ahead). The statement may still
 * have been applied.
 */
public class JdbcTimeoutException extends JdbcBackendException implements LateFailure {

    private static final long serialVersionUID = 1L;

    private final transient CompletionStage<Boolean> databaseFailed;

    /**
     * @param message what happened
     * @param cause the driver's exception
     * @param databaseFailed completes with true when the database failed, false when the statement was
     * only slow
     */
    public JdbcTimeoutException(String message, Throwable cause, CompletionStage<Boolean> databaseFailed) {
        super(message, cause);
        this.databaseFailed = databaseFailed;
    }

    @Override
    public CompletionStage<Boolean> serverFailed() {
        return this.databaseFailed;
    }

}
