package io.slidinglimiter.jdbc;

import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The check that tells a failed database from a late one, with its {@code SELECT 1} stood in for:
 * real PostgreSQL answering late is {@code JdbcFaultTests}' case.
 */
class AnswerCheckTests {

    @Test
    void aDatabaseThatAnswersWasOnlyLate() throws Exception {
        AnswerCheck check = new AnswerCheck(() -> { }, 10_000);
        assertThat(check.databaseFailed().toCompletableFuture().get(10, TimeUnit.SECONDS)).isFalse();
    }

    /** A statement ended unanswered asks the database only when whether it failed is read, once. */
    @Test
    void theDatabaseIsAskedWhenTheAnswerIsFirstReadNotBefore() {
        AtomicInteger asked = new AtomicInteger();
        CompletableFuture<Boolean> answer = CompletableFuture.completedFuture(false);
        JdbcBackendException failure = JdbcBackendException.of("answer SELECT 1", "limiter_counters",
                new UnansweredStatementException("PostgreSQL answered nothing for 100 ms",
                        UnansweredStatementException.SILENT, null, () -> {
                    asked.incrementAndGet();
                    return answer;
                }), 75);
        assertThat(failure).isInstanceOf(JdbcTimeoutException.class);
        assertThat(asked).as("a probe that never reads it sends nothing").hasValue(0);
        JdbcTimeoutException late = (JdbcTimeoutException) failure;
        assertThat(late.serverFailed()).isSameAs(answer);
        assertThat(late.serverFailed()).isSameAs(answer);
        assertThat(asked).hasValue(1);
    }

    @Test
    void aDatabaseThatFailsTheSelectFailed() throws Exception {
        AnswerCheck check = new AnswerCheck(() -> {
            throw new SQLException("PostgreSQL answered nothing", "08006");
        }, 10_000);
        assertThat(check.databaseFailed().toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void statementsEndedWhileACheckRunsShareItsAnswerAndALaterOneChecksAgain() throws Exception {
        AtomicInteger sent = new AtomicInteger();
        CountDownLatch answer = new CountDownLatch(1);
        AnswerCheck check = new AnswerCheck(() -> {
            if (sent.incrementAndGet() == 1) {
                answer.await();
            }
        }, 10_000);
        CompletableFuture<Boolean> first = check.databaseFailed().toCompletableFuture();
        CompletableFuture<Boolean> second = check.databaseFailed().toCompletableFuture();
        assertThat(second).isSameAs(first);
        answer.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(check.databaseFailed().toCompletableFuture().get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(sent).hasValue(2);
    }

    @Test
    void aSelectUnansweredWithinTheGraceIsAFailedDatabase() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        AnswerCheck check = new AnswerCheck(never::await, 50);
        try {
            assertThat(check.databaseFailed().toCompletableFuture().get(10, TimeUnit.SECONDS)).isTrue();
        }
        finally {
            never.countDown();
        }
    }

}
