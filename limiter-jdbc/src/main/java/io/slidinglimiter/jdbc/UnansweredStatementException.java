package io.slidinglimiter.jdbc;

import java.sql.SQLException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * A statement the watch ended unanswered (SQLSTATE 08006): the database answered nothing for the
 * timeout, or this statement nothing for max-wait while it answered others. Whether the database
 * failed, or only answered late, is told when asked ({@link AnswerCheck}).
 */
final class UnansweredStatementException extends SQLException {

    private static final long serialVersionUID = 1L;

    private final transient Supplier<CompletionStage<Boolean>> databaseFailed;

    UnansweredStatementException(String message, SQLException cause,
            Supplier<CompletionStage<Boolean>> databaseFailed) {
        super(message, "08006", cause);
        this.databaseFailed = databaseFailed;
    }

    /** @return asks whether the database failed: completes with true when it did, false when it was late */
    Supplier<CompletionStage<Boolean>> databaseFailed() {
        return this.databaseFailed;
    }

}
