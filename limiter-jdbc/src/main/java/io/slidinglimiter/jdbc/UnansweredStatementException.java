package io.slidinglimiter.jdbc;

import java.sql.SQLException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * A statement that got no answer in time: the database answered nothing for the timeout (SQLSTATE
 * 08006, a connection failure), or this statement nothing for max-wait while it answered others
 * (57014, a statement cancelled), or the application's pool gave it no connection (53300, too many
 * connections). Whether the database failed, or the call was only late, is told when asked
 * ({@link AnswerCheck}; never, for a pool the application holds).
 */
final class UnansweredStatementException extends SQLException {

    private static final long serialVersionUID = 1L;

    /** SQLSTATE 08006: the database answered no statement for the timeout. */
    static final String SILENT = "08006";

    /** SQLSTATE 57014: this statement waited max-wait while the database answered others. */
    static final String CANCELLED = "57014";

    /** The SQLSTATE of a connection the application's pool had none of to give: too many connections. */
    static final String POOL_EXHAUSTED = "53300";

    private final transient Supplier<CompletionStage<Boolean>> databaseFailed;

    UnansweredStatementException(String message, String sqlState, SQLException cause,
            Supplier<CompletionStage<Boolean>> databaseFailed) {
        super(message, sqlState, cause);
        this.databaseFailed = databaseFailed;
    }

    /** @return asks whether the database failed: completes with true when it did, false when it was late */
    Supplier<CompletionStage<Boolean>> databaseFailed() {
        return this.databaseFailed;
    }

}
