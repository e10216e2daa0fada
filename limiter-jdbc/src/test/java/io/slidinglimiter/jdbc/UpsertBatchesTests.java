package io.slidinglimiter.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * How single-limit acquisitions wait for the upserts in flight and go together: the lane alone, its
 * statements stood in for by the seam's interface, so that each hand-off is made to happen in turn.
 * What the statements decide is {@link JdbcBatchedDecisionsTests}'s, on a real database.
 */
class UpsertBatchesTests {

    private static final LimitDefinition LIMIT = LimitDefinition.of("lane", 10, Duration.ofMinutes(1), 10);

    private final ExecutorService callers = Executors.newCachedThreadPool();

    /** Lets the upserts sent alone end. */
    private final CountDownLatch aloneMayEnd = new CountDownLatch(1);

    /** The upserts sent alone so far. */
    private final AtomicInteger sentAlone = new AtomicInteger();

    /** The requests of each statement sent together, in the order they were sent. */
    private final List<List<String>> together = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopCallers() {
        this.aloneMayEnd.countDown();
        this.callers.shutdownNow();
    }

    @Test
    void decisionsBeyondTheUpsertsInFlightWaitAndGoTogetherAKeysSeveralCallsInAStatementOfTheirOwn()
            throws Exception {
        UpsertBatches lane = lane(new Upserts(), 2_000);
        List<Future<Decisions>> calls = fillTheLane(lane);
        for (String key : List.of("a", "b", "a", "c")) {
            calls.add(call(lane, key));
            int waiting = calls.size() - UpsertBatches.IN_FLIGHT;
            await().until(() -> lane.waiting() == waiting);
        }
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : calls) {
            assertThat(decided.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        }
        // The first upsert to end takes all four: b and c in one upsert, a's two calls in a statement of their own.
        assertThat(this.together).containsExactlyInAnyOrder(List.of("b", "c"), List.of("a", "a"));
        assertThat(this.sentAlone).hasValue(UpsertBatches.IN_FLIGHT);
        assertThat(lane.counts()).containsExactly(2, 4);
        assertThat(lane.waiting()).isZero();
    }

    @Test
    void aKeysCallsWaitForItsStatementInFlightThenGoAsOneWhileOtherKeysGoAtOnce() throws Exception {
        UpsertBatches lane = lane(new Upserts(), 2_000);
        Future<Decisions> first = call(lane, "hot");
        await().until(() -> this.sentAlone.get() == 1);
        List<Future<Decisions>> hot = List.of(call(lane, "hot"), call(lane, "hot"));
        await().alias("not queued on the row in the database: waiting here, with three upserts free")
                .until(() -> lane.waiting() == 2);
        Future<Decisions> other = call(lane, "other");
        await().alias("another key goes alone at once").until(() -> this.sentAlone.get() == 2);
        assertThat(lane.waiting()).isEqualTo(2);
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : List.of(first, hot.get(0), hot.get(1), other)) {
            assertThat(decided.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        }
        assertThat(this.together).containsExactly(List.of("hot", "hot"));
        assertThat(this.sentAlone).hasValue(2);
        // The key's statement ended: its next call goes alone at once.
        assertThat(call(lane, "hot").get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(this.sentAlone).hasValue(3);
    }

    @Test
    void aCallOfAKeyWhoseLimitChangedWhileOthersOfItWaitGoesInTheNextStatement() throws Exception {
        UpsertBatches lane = lane(new Upserts(), 2_000);
        List<Future<Decisions>> calls = fillTheLane(lane);
        calls.add(call(lane, "a"));
        await().until(() -> lane.waiting() == 1);
        calls.add(this.callers.submit(() -> lane.acquire(new LimitRequest(LIMIT.withLimit(20), "a", 1))));
        await().until(() -> lane.waiting() == 2);
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : calls) {
            assertThat(decided.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        }
        assertThat(this.together).as("each went alone, the second after the first").isEmpty();
        assertThat(this.sentAlone).hasValue(UpsertBatches.IN_FLIGHT + 2);
    }

    @Test
    void aFailedStatementFailsEachOfItsDecisionsWithTheSameCause() throws Exception {
        JdbcBackendException down = new JdbcBackendException("PostgreSQL could not acquire (SQLSTATE 08006)", null);
        UpsertBatches lane = lane(new Upserts() {
            @Override
            public Decisions[] together(List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines) {
                super.together(requests, fixedNow, deadlines);
                throw down;
            }
        }, 2_000);
        fillTheLane(lane);
        List<Future<Decisions>> waiting = List.of(call(lane, "a"), call(lane, "b"), call(lane, "c"));
        await().until(() -> lane.waiting() == 3);
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : waiting) {
            assertThatThrownBy(() -> decided.get(5, TimeUnit.SECONDS)).hasCause(down);
        }
    }

    @Test
    void anUpsertTheDatabaseAnsweredNothingFailsWhatWaitsBehindItAtOnceInsteadOfSendingIt() throws Exception {
        Unanswered silent = new Unanswered();
        UpsertBatches lane = lane(new Upserts() {
            @Override
            public Decisions alone(LimitRequest request) {
                super.alone(request);
                throw silent;
            }
        }, 2_000);
        List<Future<Decisions>> first = fillTheLane(lane);
        List<Future<Decisions>> waiting = List.of(call(lane, "a"), call(lane, "b"));
        await().until(() -> lane.waiting() == 2);
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : first) {
            assertThatThrownBy(() -> decided.get(5, TimeUnit.SECONDS)).hasCause(silent);
        }
        for (Future<Decisions> decided : waiting) {
            assertThatThrownBy(() -> decided.get(5, TimeUnit.SECONDS)).hasCause(silent);
        }
        assertThat(this.together).as("nothing sent for what waited").isEmpty();
        assertThat(this.sentAlone).hasValue(UpsertBatches.IN_FLIGHT);
        assertThat(lane.waiting()).isZero();
        // The lane is free again: the next call goes at once.
        assertThatThrownBy(() -> call(lane, "after").get(5, TimeUnit.SECONDS)).hasCause(silent);
        assertThat(this.sentAlone).hasValue(UpsertBatches.IN_FLIGHT + 1);
    }

    @Test
    void aDecisionTheDatabaseReachedAfterItsDeadlineFailsAlone() throws Exception {
        UpsertBatches lane = lane(new Upserts() {
            @Override
            public Decisions[] together(List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines) {
                Decisions[] decided = super.together(requests, fixedNow, deadlines);
                decided[1] = null;
                return decided;
            }
        }, 2_000);
        fillTheLane(lane);
        Future<Decisions> a = call(lane, "a");
        await().until(() -> lane.waiting() == 1);
        Future<Decisions> late = call(lane, "late");
        await().until(() -> lane.waiting() == 2);
        Future<Decisions> c = call(lane, "c");
        await().until(() -> lane.waiting() == 3);
        this.aloneMayEnd.countDown();
        assertThat(a.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(c.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThatThrownBy(() -> late.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(JdbcTimeoutException.class)
                .hasMessageContaining("after its caller stopped waiting")
                .satisfies((ex) -> assertThat(((JdbcTimeoutException) ex.getCause()).serverFailed()
                        .toCompletableFuture()).as("the database answered: a slow call").isCompletedWithValue(false));
    }

    @Test
    void aCallerThatWaitsPastItsTurnLeavesWithAConnectionFailureAndTheLaneGoesOn() throws Exception {
        UpsertBatches lane = lane(new Upserts(), 100);
        List<Future<Decisions>> first = fillTheLane(lane);
        Future<Decisions> leaves = call(lane, "leaves");
        assertThatThrownBy(() -> leaves.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(JdbcBackendException.class)
                .cause().hasMessageContaining("did not end within 100 ms");
        assertThat(JdbcBackendException.sqlStateOf(catchCause(leaves))).as("the policy's failure, as a pool's").isEqualTo("08001");
        assertThat(lane.waiting()).isZero();
        this.aloneMayEnd.countDown();
        for (Future<Decisions> decided : first) {
            assertThat(decided.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        }
        assertThat(call(lane, "after").get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(this.together).isEmpty();
    }

    @Test
    void withBatchingOffEachDecisionGoesAloneAtOnce() throws Exception {
        UpsertBatches lane = lane(new Upserts(), 2_000);
        lane.setEnabled(false);
        this.aloneMayEnd.countDown();
        List<Future<Decisions>> calls = new ArrayList<>();
        for (int i = 0; i < 3 * UpsertBatches.IN_FLIGHT; i++) {
            calls.add(call(lane, "k" + i));
        }
        for (Future<Decisions> decided : calls) {
            assertThat(decided.get(5, TimeUnit.SECONDS).allowed()).isTrue();
        }
        assertThat(lane.counts()).containsExactly(0, 0);
    }

    /** As many callers as upserts may be in flight, each held in its upsert until {@link #aloneMayEnd}. */
    private List<Future<Decisions>> fillTheLane(UpsertBatches lane) {
        List<Future<Decisions>> calls = new ArrayList<>();
        for (int i = 0; i < UpsertBatches.IN_FLIGHT; i++) {
            calls.add(call(lane, "in-flight-" + i));
        }
        await().until(() -> this.sentAlone.get() == UpsertBatches.IN_FLIGHT);
        return calls;
    }

    private Future<Decisions> call(UpsertBatches lane, String key) {
        return this.callers.submit(() -> lane.acquire(new LimitRequest(LIMIT, key, 1)));
    }

    private static Throwable catchCause(Future<?> future) {
        try {
            future.get(5, TimeUnit.SECONDS);
            return null;
        }
        catch (Exception ex) {
            return ex.getCause();
        }
    }

    private UpsertBatches lane(Upserts upserts, long turnWaitMillis) {
        return new UpsertBatches(upserts, (failure) -> !(failure instanceof Unanswered),
                new StatementClock(null, turnWaitMillis), turnWaitMillis);
    }

    /** A failure of a database that answered nothing (a timed-out statement, no connection). */
    private static final class Unanswered extends JdbcBackendException {

        private static final long serialVersionUID = 1L;

        Unanswered() {
            super("PostgreSQL answered nothing for 100 ms", null);
        }

    }

    /** Statements that admit everything: alone once {@link #aloneMayEnd}, together (or each) at once, noted. */
    private class Upserts implements UpsertBatches.Upserts {

        @Override
        public Decisions alone(LimitRequest request) {
            UpsertBatchesTests.this.sentAlone.incrementAndGet();
            try {
                if (!UpsertBatchesTests.this.aloneMayEnd.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never let end");
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            return admitted();
        }

        @Override
        public Decisions[] together(List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines) {
            UpsertBatchesTests.this.together.add(requests.stream().map(LimitRequest::key).toList());
            Decisions[] decided = new Decisions[requests.size()];
            for (int i = 0; i < decided.length; i++) {
                decided[i] = admitted();
            }
            return decided;
        }

        @Override
        public Decisions[] each(List<LimitRequest> requests, Long fixedNow, Long[] deadlines) {
            assertThat(requests).extracting(LimitRequest::key).as("one key's calls").containsOnly(requests.get(0).key());
            return together(requests, new Long[requests.size()], deadlines);
        }

        private static Decisions admitted() {
            return new Decisions(true, List.of(new Decision(true, 10, 9, 0, 60_000)), 0, 1);
        }

    }

}
