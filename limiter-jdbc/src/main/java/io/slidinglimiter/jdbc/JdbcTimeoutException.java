package io.slidinglimiter.jdbc;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.slidinglimiter.failover.LateFailure;

/**
 * A statement PostgreSQL answered nothing for {@code limiter.jdbc.timeout}, while it answered no other
 * statement of the limiter's either, or nothing for {@code limiter.jdbc.max-wait} while it answered others.
 * <p>
 * The statement was ended; its decision follows the failure policy. Whether the database failed is
 * told by {@link #serverFailed()}: one that answers a {@code SELECT 1} sent when that is first asked
 * was only slow (a host whose processors something else keeps busy, a queue of statements ahead), and
 * one that answered others meanwhile was. The statement may still have been applied.
 */
public class JdbcTimeoutException extends JdbcBackendException implements LateFailure {

    private static final long serialVersionUID = 1L;

    private final transient Supplier<CompletionStage<Boolean>> check;

    private final transient Object lock = new Object();

    /** The check's answer, once asked; guarded by lock. */
    private transient CompletionStage<Boolean> databaseFailed;

    /**
     * @param message what happened
     * @param cause the driver's exception
     * @param databaseFailed completes with true when the database failed, false when the statement was
     * only slow
     */
    public JdbcTimeoutException(String message, Throwable cause, CompletionStage<Boolean> databaseFailed) {
        this(message, cause, () -> databaseFailed);
    }

    /**
     * @param message what happened
     * @param cause the driver's exception
     * @param check asks whether the database failed, the first time {@link #serverFailed()} is called
     */
    JdbcTimeoutException(String message, Throwable cause, Supplier<CompletionStage<Boolean>> check) {
        super(message, cause);
        this.check = check;
    }

    @Override
    public CompletionStage<Boolean> serverFailed() {
        synchronized (this.lock) {
            if (this.databaseFailed == null) {
                this.databaseFailed = this.check.get();
            }
            return this.databaseFailed;
        }
    }

}
