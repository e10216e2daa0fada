package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.CapturedLog;
import io.slidinglimiter.testsupport.ConcurrentCalls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The database backend as applications get it, the core's failover around it, when PostgreSQL fails:
 * stopped at once and started again under traffic, a row locked by another session, a pool with no
 * connection to give. Each test runs its own server. Every decision is made by the limit's failure
 * policy within a bound far below the pool's own 30 s wait, the backend recovers without a restart,
 * and what the fallbacks admitted is counted in the database once it answers.
 */
class JdbcFaultTests {

    /** Far above the 100 ms timeout, far below the 30 s the pool would wait: a liveness bound, not a speed. */
    private static final long BOUND_MILLIS = 5_000;

    /** The test's own server, pool and table. */
    @RegisterExtension
    final Databases.Own database = new Databases.Own();

    private final AtomicInteger fallbacks = new AtomicInteger();

    /** The database backend of the last {@link #instance}. */
    private JdbcBackend jdbc;

    private ResilientBackend instance(FailurePolicy policy) {
        JdbcBackend jdbc = new JdbcBackend(this.database.pool, this.database.table, Duration.ofMillis(100));
        this.jdbc = jdbc;
        ResilientBackend backend = new ResilientBackend(jdbc, new LocalBackend(TimeSource.monotonic(), 1_000),
                new ResilientBackend.Settings(policy, Map.of(), 3, 500, 1_000), TimeSource.monotonic(),
                (limit) -> this.fallbacks.incrementAndGet(), jdbc::ping, null);
        this.database.closing(backend);
        this.database.closing(jdbc);
        return backend;
    }

    /** Makes the database answer a statement of a key named {@code late-...} that many seconds late. */
    private void answerLate(String seconds) throws Exception {
        try (Connection session = this.database.pool.getConnection(); Statement ddl = session.createStatement()) {
            ddl.execute("CREATE FUNCTION late_answer() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " IF NEW.counter_key LIKE 'late-%' THEN PERFORM pg_sleep(" + seconds + "); END IF; RETURN NEW;"
                    + " END $$");
            ddl.execute("CREATE TRIGGER late_answer BEFORE INSERT OR UPDATE ON limiter_counters"
                    + " FOR EACH ROW EXECUTE FUNCTION late_answer()");
        }
    }

    /** Reads the database's count on a connection of its own. */
    private long usedInDatabase(LimitDefinition limit, String key) {
        try (HikariDataSource reader = Databases.pool(this.database.server, 1);
                JdbcBackend backend = new JdbcBackend(reader, this.database.table, Duration.ofSeconds(5))) {
            return backend.usage(limit, key).used();
        }
    }

    private static Decision timed(ResilientBackend backend, LimitDefinition limit, String key) {
        long start = System.nanoTime();
        Decision decision = backend.tryAcquire(limit, key, 1);
        assertThat((System.nanoTime() - start) / 1_000_000).as("a decision's wait").isLessThan(BOUND_MILLIS);
        return decision;
    }

    @Test
    void aServerStoppedAtOnceIsDecidedByThePolicyAndWhatFailOpenAdmittedIsCountedWhenItIsBack() {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN);
        LimitDefinition limit = LimitDefinition.of("stopped", 100, Duration.ofMinutes(5), 10);
        for (int i = 0; i < 3; i++) {
            assertThat(timed(backend, limit, "k").allowed()).isTrue();
        }
        this.database.server.stopImmediately();
        for (int i = 0; i < 20; i++) {
            assertThat(timed(backend, limit, "k").allowed()).as("fail-open while stopped").isTrue();
        }
        assertThat(this.fallbacks).hasPositiveValue();
        assertThat(backend.failoverStatus().isFailing()).isTrue();
        this.database.server.startAgain();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            int before = this.fallbacks.get();
            timed(backend, limit, "k");
            assertThat(this.fallbacks.get()).as("decided in the database again").isEqualTo(before);
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(usedInDatabase(limit, "k")).as("the 3 before, the 20 fail-open admitted, those after")
                        .isGreaterThanOrEqualTo(24));
    }

    /**
     * Every process of the server stops where it stands (a stalled host): its sockets stay open and
     * nothing answers. Decisions end after the timeout (the statement watch aborts their connections)
     * and fall back; once the server runs on, decisions are made in it again and what fail-open
     * admitted meanwhile is counted there.
     */
    @Test
    void aStalledServerIsDecidedByThePolicyAndRecoveredFromWhenItRunsOn() {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN);
        LimitDefinition limit = LimitDefinition.of("stalled", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "k").allowed()).isTrue();
        this.database.server.pause();
        try {
            for (int i = 0; i < 10; i++) {
                assertThat(timed(backend, limit, "k").allowed()).as("fail-open while stalled").isTrue();
            }
            assertThat(this.fallbacks).hasValue(10);
        }
        finally {
            this.database.server.resume();
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            int before = this.fallbacks.get();
            timed(backend, limit, "k");
            assertThat(this.fallbacks.get()).as("decided in the database again").isEqualTo(before);
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(usedInDatabase(limit, "k")).as("the one before, the 10 fail-open admitted, those after")
                        .isGreaterThanOrEqualTo(12));
    }

    /**
     * Twelve callers at once on a stalled server, more than the four upserts an instance keeps in
     * flight: those that waited behind the upserts the database answered nothing for follow the policy
     * with them, without a statement of their own (nothing is sent together), each within the bound.
     */
    @Test
    void callersWaitingBehindUpsertsOfAStalledServerFollowThePolicyWithThem() throws Exception {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN);
        LimitDefinition limit = LimitDefinition.of("stalled-together", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "k").allowed()).isTrue();
        this.database.server.pause();
        try {
            ConcurrentCalls calls = ConcurrentCalls.run(12, 1,
                    (thread, i) -> timed(backend, limit, "key-" + thread).allowed());
            assertThat(calls.admitted()).as("fail-open for each").hasValue(12);
            assertThat(calls.failures()).hasValue(0);
            assertThat(this.fallbacks).hasValue(12);
            assertThat(this.jdbc.batchCounts()[0]).as("statements sent together while stalled").isZero();
        }
        finally {
            this.database.server.resume();
        }
    }

    @Test
    void failClosedRejectsWhileTheServerIsStopped() {
        ResilientBackend backend = instance(FailurePolicy.FAIL_CLOSED);
        LimitDefinition limit = LimitDefinition.of("closed", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "k").allowed()).isTrue();
        this.database.server.stopImmediately();
        for (int i = 0; i < 10; i++) {
            assertThat(timed(backend, limit, "k").allowed()).isFalse();
        }
        this.database.server.startAgain();
        await().atMost(Duration.ofSeconds(20)).until(() -> timed(backend, limit, "k").allowed());
    }

    /**
     * Another session holds a key's row (a transaction left open): that key's decisions wait for the
     * lock no longer than the timeout and go to the failure policy, as that key's own fault (no
     * breaker opens, no outage starts), logged once as a warning that passes, not as a broken
     * limit; other keys decide in the database.
     */
    @Test
    void aRowLockedByAnotherSessionFallsBackForItsKeyAlone() throws Exception {
        ResilientBackend backend = instance(FailurePolicy.FAIL_CLOSED);
        LimitDefinition limit = LimitDefinition.of("locked", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "held").allowed()).isTrue();
        try (CapturedLog log = new CapturedLog("io.slidinglimiter.failover.LimitFaults");
                HikariDataSource other = Databases.pool(this.database.server, 1); Connection session = other.getConnection()) {
            session.setAutoCommit(false);
            try (PreparedStatement lock = session.prepareStatement(
                    "SELECT * FROM limiter_counters WHERE limit_name = 'locked' AND counter_key = 'held' FOR UPDATE")) {
                lock.executeQuery().close();
            }
            int before = this.fallbacks.get();
            for (int i = 0; i < 5; i++) {
                assertThat(timed(backend, limit, "held").allowed()).as("fail-closed while locked").isFalse();
            }
            assertThat(this.fallbacks.get()).isEqualTo(before + 5);
            // 400 ms: the lock wait's own error (after 300 ms) comes back long before the statement's watch
            // gives up on the connection, on a busy host too (with 100 ms, a slow reply once found it aborted).
            try (JdbcBackend raw = new JdbcBackend(this.database.pool, this.database.table, Duration.ofMillis(400))) {
                // What the log names as the key's own failure: the lock, and what to do for a key this hot.
                assertThatThrownBy(() -> raw.tryAcquire(limit, "held", 1)).isInstanceOf(JdbcBackendException.class)
                        .satisfies((ex) -> assertThat(((JdbcBackendException) ex).sqlState()).isEqualTo("55P03"))
                        .hasRootCauseMessage("a row of this key was locked for longer than its 300 ms lock wait (three"
                                + " quarters of limiter.jdbc.timeout): by another session's open transaction, or by"
                                + " this key's calls queueing for it (from several instances, or with"
                                + " limiter.jdbc.batching off); a key that hot is decided in memory with lease:"
                                + " true");
            }
            assertThat(backend.failoverStatus().isCircuitOpen()).as("the key's own fault: no breaker").isFalse();
            assertThat(backend.failoverStatus().isFailing()).as("no outage").isFalse();
            assertThat(timed(backend, limit, "free").allowed()).as("another key").isTrue();
            assertThat(this.fallbacks.get()).isEqualTo(before + 5);
            assertThat(log.records).singleElement().satisfies((record) -> {
                assertThat(record.getLevel()).isEqualTo(Level.WARNING);
                assertThat(record.getMessage()).contains("limit 'locked' waited too long in PostgreSQL for a key's"
                        + " counter that another client held (a row of this key was locked for longer than its 75 ms",
                        "followed its limiter.jdbc.on-failure policy and the key's next calls try PostgreSQL again");
            });
            session.rollback();
        }
        assertThat(timed(backend, limit, "held").allowed()).isTrue();
        assertThat(usedInDatabase(limit, "held")).isEqualTo(2);
    }

    /**
     * PostgreSQL answers a key's statements later than the timeout while it is alive (as on a host whose
     * processors something else keeps busy; here a trigger sleeps for those keys): each decision follows
     * the policy within the timeout, its statement cancelled in the database (the pool logs no broken
     * connection), and the {@code SELECT 1} the database answers after each tells that it did not fail:
     * slow calls, no breaker, no outage, other keys decided in the database.
     */
    @Test
    void aStatementALiveDatabaseAnswersLateIsASlowCallNotAnOutage() throws Exception {
        ResilientBackend backend = instance(FailurePolicy.FAIL_CLOSED);
        LimitDefinition limit = LimitDefinition.of("late", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "first").allowed()).isTrue();
        answerLate("0.4");
        try (CapturedLog hikari = new CapturedLog("com.zaxxer.hikari")) {
            for (int i = 1; i <= 5; i++) {
                assertThat(timed(backend, limit, "late-" + i).allowed()).as("fail-closed while late").isFalse();
                long slow = i;
                await().atMost(Duration.ofSeconds(10)).until(() -> backend.failoverStatus().slowDecisions() == slow
                        || !backend.failoverStatus().lastFailure().isEmpty());
            }
            // Each late statement was cancelled in the database, its connection whole: none logged as broken.
            assertThat(hikari.records).noneSatisfy((record) ->
                    assertThat(record.getMessage()).contains("marked as broken"));
        }
        assertThat(backend.failoverStatus().lastFailure()).as("no outage, not even a short one").isEmpty();
        assertThat(backend.failoverStatus().slowDecisions()).isEqualTo(5);
        assertThat(backend.failoverStatus().isCircuitOpen()).as("no breaker").isFalse();
        assertThat(this.fallbacks).hasValue(5);
        assertThat(timed(backend, limit, "other").allowed()).as("another key, in the database").isTrue();
        assertThat(this.fallbacks).hasValue(5);
    }

    /**
     * A statement that waits {@code max-wait} while PostgreSQL answers the limiter's others is cancelled
     * then (its connection intact: the pool logs no broken connection), and it is a slow call at once: the database was seen answering, so no {@code SELECT 1} asks it, and
     * its failure (57014, cancelled) is no connection's, so what waits behind it in the lane is sent.
     */
    @Test
    void aStatementEndedAtMaxWaitWhileOthersAreAnsweredIsSlowWithoutAsking() throws Exception {
        answerLate("1");
        LimitDefinition limit = LimitDefinition.of("patient", 1_000_000, Duration.ofMinutes(5), 10);
        ScheduledExecutorService others = Executors.newSingleThreadScheduledExecutor();
        try (JdbcBackend raw = new JdbcBackend(this.database.pool, this.database.table, Duration.ofMillis(100), Duration.ofMillis(300));
                CapturedLog hikari = new CapturedLog("com.zaxxer.hikari")) {
            AtomicInteger answered = new AtomicInteger();
            others.scheduleWithFixedDelay(() -> {
                raw.tryAcquire(limit, "other", 1);
                answered.incrementAndGet();
            }, 0, 5, TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> answered.get() > 5);
            assertThatThrownBy(() -> raw.tryAcquire(limit, "late-1", 1)).isInstanceOf(JdbcTimeoutException.class)
                    .hasMessageContaining("answered this statement nothing for 300 ms (limiter.jdbc.max-wait) while"
                            + " it answered others")
                    .satisfies((ex) -> assertThat(((JdbcTimeoutException) ex).serverFailed().toCompletableFuture())
                            .as("known at once: the database answered others").isCompletedWithValue(false))
                    .satisfies((ex) -> assertThat(((JdbcTimeoutException) ex).sqlState()).isEqualTo("57014"))
                    .satisfies((ex) -> assertThat(raw.answered(ex)).as("the database answers").isTrue())
                    .rootCause().as("cancelled in the database, its connection intact")
                    .hasMessageContaining("canceling statement due to user request");
            assertThat(hikari.records).as("the pool saw no broken connection").noneSatisfy((record) ->
                    assertThat(record.getMessage()).contains("marked as broken"));
        }
        finally {
            others.shutdownNow();
            others.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The application holds every connection of its pool: a decision waits for one no longer than the
     * timeout (not the pool's 30 s) and falls back, as this application's overload (a slow call naming
     * the pool), not a failing database; once one is free, it decides in the database.
     */
    @Test
    void anExhaustedPoolFallsBackWithinTheTimeout() throws Exception {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN);
        LimitDefinition limit = LimitDefinition.of("exhausted", 100, Duration.ofMinutes(5), 10);
        assertThat(timed(backend, limit, "k").allowed()).isTrue();
        List<Connection> held = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            held.add(this.database.pool.getConnection());
        }
        int before = this.fallbacks.get();
        assertThat(timed(backend, limit, "k").allowed()).isTrue();
        assertThat(this.fallbacks.get()).as("fail-open, not the database").isEqualTo(before + 1);
        // The application's overload, named as such: a slow call, no breaker, no outage of PostgreSQL.
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.failoverStatus().slowDecisions() == 1);
        assertThat(backend.failoverStatus().lastFailure()).as("no outage").isEmpty();
        assertThat(backend.failoverStatus().isCircuitOpen()).isFalse();
        assertThatThrownBy(this.jdbc::warmUp).as("what the slow call's log names")
                .hasMessageContaining("the application's connection pool had no connection free within 100 ms"
                        + " (limiter.jdbc.timeout): 4 of 4 in use").hasMessageContaining("maximum-pool-size");
        for (Connection connection : held) {
            connection.close();
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            int now = this.fallbacks.get();
            timed(backend, limit, "k");
            assertThat(this.fallbacks.get()).isEqualTo(now);
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(usedInDatabase(limit, "k")).as("the fail-open admission counted too").isGreaterThanOrEqualTo(3));
    }


    /**
     * The pool handed over no connection within the timeout while the limiter's statements kept
     * completing: this JVM's busy threads, not a down database (at 64 callers on two cores, Hikari
     * timed a caller out with all 16 connections idle). The caller waits on, up to max-wait; with
     * nothing completing it falls back within the timeout, as above.
     */
    @Test
    void aCallerWaitsOnForAConnectionWhileStatementsKeepCompleting() throws Exception {
        ScheduledExecutorService others = Executors.newSingleThreadScheduledExecutor();
        try (HikariDataSource one = Databases.pool(this.database.server, 1)) {
            JdbcConnections connections = new JdbcConnections(one, 100, 2_000);
            connections.open().close();
            Connection held = one.getConnection();
            others.scheduleAtFixedRate(() -> connections.watch().answered(), 0, 20, TimeUnit.MILLISECONDS);
            others.schedule(() -> {
                held.close();
                return null;
            }, 300, TimeUnit.MILLISECONDS);
            try (Connection connection = connections.open()) {
                assertThat(connection.isValid(1)).isTrue();
            }
            connections.close();
        }
        finally {
            others.shutdownNow();
        }
    }


    /**
     * Hikari's validation timeout (5 s unless set) is a wait the limiter cannot end: a decision on a
     * stalled database waits it for a connection that was idle. Longer than the timeout, it is
     * warned of at start, naming both properties and the value to set.
     */
    @Test
    void aValidationTimeoutLongerThanTheTimeoutIsWarnedOfAtStart() {
        try (CapturedLog log = new CapturedLog(JdbcConnections.class.getName())) {
            List<LogRecord> records = log.records;
            try (HikariDataSource asRecommended = Databases.pool(this.database.server, 1);
                    JdbcBackend quiet = new JdbcBackend(asRecommended, this.database.table, Duration.ofMillis(100))) {
                assertThat(records).isEmpty();
            }
            try (HikariDataSource hikarisDefault = Databases.pool(this.database.server, 1, Duration.ofSeconds(5));
                    JdbcBackend warned = new JdbcBackend(hikarisDefault, this.database.table, Duration.ofMillis(100))) {
                assertThat(records).singleElement().satisfies((record) -> {
                    assertThat(record.getLevel()).isEqualTo(Level.WARNING);
                    assertThat(record.getMessage()).contains("spring.datasource.hikari.validation-timeout (5000 ms)",
                            "limiter.jdbc.timeout (100 ms)", "Set spring.datasource.hikari.validation-timeout=250 (milliseconds");
                });
            }
        }
    }

}
