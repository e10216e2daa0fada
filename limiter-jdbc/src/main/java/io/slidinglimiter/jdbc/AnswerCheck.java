package io.slidinglimiter.jdbc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Tells whether a database whose statement the watch ended failed, or only answered late.
 * <p>
 * The watch ends a statement once the database answered the limiter's statements nothing for the
 * timeout, so that its decision follows the failure policy in time. A host whose processors something
 * else keeps busy delays a database that is alive just as much: one {@code SELECT 1}, sent on a
 * thread of its own once the statement was ended, tells them apart. Answered, the statement was slow
 * (no breaker trips, no outage starts); unanswered within its own timeout, or within the grace, the
 * database failed. Statements ended while a check runs share its answer.
 */
final class AnswerCheck {

    private final SelectOne selectOne;

    private final long graceMillis;

    /** The check running or last run; guarded by this. */
    private CompletableFuture<Boolean> last;

    /**
     * @param selectOne sends {@code SELECT 1} through the watch, and throws when it is not answered
     * @param graceMillis the longest a check takes before the database is said to have failed
     */
    AnswerCheck(SelectOne selectOne, long graceMillis) {
        this.selectOne = selectOne;
        this.graceMillis = graceMillis;
    }

    /**
     * Checks the database once a statement of the limiter's was ended unanswered.
     * @return completes with true when the database failed, false when it answers
     */
    synchronized CompletionStage<Boolean> databaseFailed() {
        if (this.last == null || this.last.isDone()) {
            CompletableFuture<Boolean> check = new CompletableFuture<>();
            this.last = check;
            check.completeOnTimeout(true, this.graceMillis, TimeUnit.MILLISECONDS);
            Thread thread = new Thread(() -> {
                try {
                    this.selectOne.send();
                    check.complete(false);
                }
                catch (Exception ex) {
                    check.complete(true);
                }
            }, "limiter-jdbc-answer-check");
            thread.setDaemon(true);
            thread.start();
        }
        return this.last;
    }

    /** Sends {@code SELECT 1}. */
    @FunctionalInterface
    interface SelectOne {

        void send() throws Exception;

    }

}
