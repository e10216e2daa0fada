package io.slidinglimiter.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The database backend against a real PostgreSQL server that the test makes and starts on a port of
 * its own.
 */
class JdbcBackendTests {

    private static PostgresServer server;

    private static HikariDataSource pool;

    private static CounterTable table;

    private static JdbcBackend backend;

    @BeforeAll
    static void startDatabase() {
        server = PostgresServer.start();
        pool = Databases.pool(server, 20);
        table = Databases.createTable(server, CounterTable.DEFAULT_NAME);
        backend = new JdbcBackend(pool, table, Duration.ofSeconds(5));
    }

    @AfterAll
    static void stopDatabase() {
        backend.close();
        pool.close();
        server.close();
    }

    /**
     * A cold backend does not know the database's clock, so its first acquisition would carry no
     * deadline (and count even after its caller gave up); the warm-up learns it with a read that
     * writes nothing.
     */
    @Test
    void theWarmUpLearnsTheDatabasesClockAndWritesNothing() throws Exception {
        try (JdbcBackend cold = new JdbcBackend(pool, table, Duration.ofSeconds(5))) {
            assertThat(cold.knowsDeadlines()).isFalse();
            cold.warmUp();
            assertThat(cold.knowsDeadlines()).isTrue();
        }
        try (var connection = pool.getConnection(); var statement = connection.createStatement();
                var rows = statement.executeQuery("SELECT count(*) FROM limiter_counters WHERE limit_name = 'limiter-warm-up'")) {
            rows.next();
            assertThat(rows.getLong(1)).as("a read: no row").isZero();
        }
    }

    /** Seeded schedules at fixed times: every decision equals the local backend's (the core's model-checked counter). */
    @Test
    void decidesLikeTheLocalBackendForBothAlgorithms() {
        replayAgainstTheLocalBackend("", 120, false);
    }

    /**
     * Seeded schedules of calls charged after they ran, some below their cost, some above it and past
     * the limit: every decision, and what every key holds after each settle, equals the local backend's.
     */
    @Test
    void settlesLikeTheLocalBackendForBothAlgorithms() {
        replayAgainstTheLocalBackend("settled-", 100, true);
    }

    private static void replayAgainstTheLocalBackend(String prefix, int steps, boolean settle) {
        for (long seed = 0; seed < 30; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long start = 1_700_000_000_000L + random.nextLong(0, 1_000_000);
            ManualTimeSource time = new ManualTimeSource(start);
            LocalBackend local = new LocalBackend(time, 1_000);
            JdbcBackend database = JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), time::currentTimeMillis);
            int slots = random.nextInt(1, 11);
            long slotMillis = random.nextLong(1, 40);
            LimitDefinition counter = LimitDefinition.of(prefix + "counter-" + seed, random.nextLong(1, 20),
                    Duration.ofMillis(slots * slotMillis), slots);
            LimitDefinition log = new LimitDefinition(prefix + "log-" + seed, random.nextLong(1, 20),
                    Duration.ofMillis(random.nextLong(1, 300)), 1, Algorithm.SLIDING_LOG);
            for (int step = 0; step < steps; step++) {
                time.advanceMillis(random.nextInt(10) < 7 ? random.nextLong(0, 20) : random.nextLong(0, 400));
                LimitDefinition limit = random.nextBoolean() ? counter : log;
                String key = "k" + random.nextInt(3);
                long cost = random.nextLong(1, limit.limit() + 1);
                List<LimitRequest> requests = List.of(new LimitRequest(limit, key, cost));
                String described = String.format("seed %d step %d: %s %s cost %d", seed, step, limit.name(), key, cost);
                Decisions expected = local.tryAcquireAll(requests);
                Decisions actual = database.tryAcquireAll(requests);
                assertThat(actual.decisions()).as(described).isEqualTo(expected.decisions());
                assertThat(database.peek(limit, key)).as(described + ", peeked").isEqualTo(local.peek(limit, key));
                if (!settle || !expected.allowed()) {
                    continue;
                }
                time.advanceMillis(random.nextBoolean() ? 0 : random.nextLong(0, 50));
                long[] charge = { random.nextLong(0, 2 * limit.limit() + 1) };
                local.settle(requests, expected, charge);
                database.settle(requests, actual, charge);
                assertThat(database.usage(limit, key)).as(described + " settled to " + charge[0])
                        .isEqualTo(local.usage(limit, key));
            }
            database.close();
        }
    }

    @Test
    void severalLimitsAreAllOrNothingInOneStatement() {
        LimitDefinition perUser = LimitDefinition.of("per-user", 5, Duration.ofMinutes(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10);
        assertThat(backend.tryAcquireAll(List.of(new LimitRequest(perUser, "alice", 1), new LimitRequest(global, "all", 1))).allowed()).isTrue();
        assertThat(backend.tryAcquireAll(List.of(new LimitRequest(perUser, "bob", 1), new LimitRequest(global, "all", 1))).allowed()).isTrue();
        Decisions denied = backend.tryAcquireAll(List.of(new LimitRequest(perUser, "carol", 1), new LimitRequest(global, "all", 1)));
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.get(0).allowed()).as("per-user alone would admit").isTrue();
        assertThat(backend.peek(perUser, "carol").remaining()).isEqualTo(5);
    }

    @Test
    void sixteenThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hammered", 500, Duration.ofMinutes(1), 10);
        ConcurrentCalls calls = ConcurrentCalls.run(16, 60, () -> backend.tryAcquire(limit, "one-key", 1).allowed());
        assertThat(calls.admitted()).hasValue(500);
        assertThat(calls.failures()).hasValue(0);
    }

    /**
     * Two application instances, each with its own pool, on one database; threads on each take one
     * key's permits, one limit alone and one together with another: exactly the limit is admitted.
     */
    @Test
    void twoInstancesSharingTheDatabaseAdmitExactlyTheLimit() throws Exception {
        try (HikariDataSource otherPool = Databases.pool(server, 10);
                JdbcBackend other = new JdbcBackend(otherPool, table, Duration.ofSeconds(5))) {
            LimitDefinition limit = LimitDefinition.of("shared", 300, Duration.ofMinutes(1), 6);
            LimitDefinition perCall = LimitDefinition.of("shared-per-call", 1_000_000, Duration.ofMinutes(1), 6);
            SplittableRandom random = new SplittableRandom(7);
            ConcurrentCalls calls = ConcurrentCalls.run(12, 40, () -> {
                JdbcBackend instance = (Thread.currentThread().getId() % 2 == 0) ? backend : other;
                if (random.split().nextBoolean()) {
                    return instance.tryAcquire(limit, "key", 1).allowed();
                }
                return instance.tryAcquireAll(List.of(new LimitRequest(perCall, "z", 1), new LimitRequest(limit, "key", 1)))
                        .allowed();
            });
            assertThat(calls.admitted()).hasValue(300);
            assertThat(calls.failures()).hasValue(0);
            assertThat(other.usage(limit, "key").used()).isEqualTo(300);
        }
    }

    @Test
    void aRefundGivesBackExactlyWhatWasTaken() {
        LimitDefinition limit = LimitDefinition.of("refunded", 10, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "k", 4));
        Decisions taken = backend.tryAcquireAll(requests);
        backend.tryAcquire(limit, "k", 1);
        backend.refund(requests, taken);
        assertThat(backend.usage(limit, "k").used()).isEqualTo(1);
    }

    @Test
    void aRefundOfAnAdmissionBeforeAResetGivesNothingBack() {
        LimitDefinition limit = LimitDefinition.of("reset-then-refund", 10, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "k", 3));
        Decisions before = backend.tryAcquireAll(requests);
        backend.reset(limit, "k");
        backend.tryAcquire(limit, "k", 2);
        backend.refund(requests, before);
        assertThat(backend.usage(limit, "k").used()).isEqualTo(2);
    }

    @Test
    void aPeekWritesNothing() {
        LimitDefinition limit = LimitDefinition.of("peeked", 10, Duration.ofMinutes(1), 10);
        Decision unknown = backend.peek(limit, "never-seen");
        assertThat(unknown.allowed()).isTrue();
        assertThat(unknown.remaining()).isEqualTo(10);
        assertThat(rowCount("peeked")).isZero();
    }

    @Test
    void aChangedGeometryStartsAfreshAndAChangedLimitKeepsTheCounts() {
        LimitDefinition limit = LimitDefinition.of("reshaped", 10, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "k", 6);
        assertThat(backend.usage(limit.withLimit(20), "k").used()).isEqualTo(6);
        assertThat(backend.usage(LimitDefinition.of("reshaped", 10, Duration.ofMinutes(1), 12), "k").used()).isZero();
    }

    @Test
    void resetForgetsOneKeyAndResetAllEveryOne() {
        LimitDefinition limit = LimitDefinition.of("forgotten", 10, Duration.ofMinutes(1), 10);
        backend.tryAcquire(limit, "a", 3);
        backend.tryAcquire(limit, "b", 4);
        backend.reset(limit, "a");
        assertThat(backend.usage(limit, "a").used()).isZero();
        assertThat(backend.usage(limit, "b").used()).isEqualTo(4);
        backend.resetAll();
        assertThat(backend.usage(limit, "b").used()).isZero();
    }

    @Test
    void rowsIdlePastTheirWindowAreDeletedInBoundedSteps() {
        ManualTimeSource time = new ManualTimeSource(1_800_000_000_000L);
        JdbcBackend database = JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), time::currentTimeMillis);
        LimitDefinition limit = LimitDefinition.of("idle", 10, Duration.ofSeconds(10), 10);
        database.deleteIdle(1_000_000);
        for (int i = 0; i < 25; i++) {
            database.tryAcquire(limit, "key-" + i, 1);
        }
        assertThat(database.deleteIdle(100)).as("none idle yet").isZero();
        time.advanceMillis(11_001);
        assertThat(database.deleteIdle(10)).isEqualTo(10);
        assertThat(database.deleteIdle(100)).isEqualTo(15);
        assertThat(rowCount("idle")).isZero();
        database.close();
    }

    @Test
    void keysAndNamesOfAnyTextAreKeptApart() {
        LimitDefinition limit = LimitDefinition.of("quoted'name", 1, Duration.ofMinutes(1), 1);
        assertThat(backend.tryAcquire(limit, "a'); DROP TABLE limiter_counters; --", 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, "ключ \u0000".replace("\u0000", "x"), 1).allowed()).isTrue();
        assertThat(backend.tryAcquire(limit, "a'); DROP TABLE limiter_counters; --", 1).allowed()).isFalse();
    }

    @Test
    void aTableNameSqlCannotTakeIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> new CounterTable("counters; drop table x"))
                .withMessageContaining("not a table name");
        assertThatIllegalArgumentException().isThrownBy(() -> new CounterTable("Counters"));
        assertThat(new CounterTable("limits.counters").limitsTable()).isEqualTo("limits.counters_limits");
    }

    private static long rowCount(String limitName) {
        try (var connection = pool.getConnection();
                var statement = connection.prepareStatement("SELECT count(*) FROM limiter_counters WHERE limit_name = ?")) {
            statement.setString(1, limitName);
            try (var result = statement.executeQuery()) {
                result.next();
                return result.getLong(1);
            }
        }
        catch (java.sql.SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }

}
