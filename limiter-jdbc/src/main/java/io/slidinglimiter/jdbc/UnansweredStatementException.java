package io.slidinglimiter.jdbc;

import java.sql.SQLException;
import java.util.concurrent.CompletionStage;

/**
 * A statement the watch ended because the database answered nothing for the timeout (SQLSTATE 08006).
 * Whether the database failed, or only answered late, is told later ({@link AnswerCheck}).
 */
final class UnansweredStatementException extends SQLException {

    private static final long serialVersionUID = 1L;

    private final transient CompletionStage<Boolean> databaseFailed;

    UnansweredStatementException(String message, SQLException cause, CompletionStage<Boolean> databaseFailed) {
        super(message, "08006", cause);
        this.databaseFailed = databaseFailed;
    }

    /** @return completes with true when the database failed, false when the statement was only slow */
    CompletionStage<Boolean> databaseFailed() {
        return this.databaseFailed;
    }

}
