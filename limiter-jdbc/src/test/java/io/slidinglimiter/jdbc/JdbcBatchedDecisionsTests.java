package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Single-limit acquisitions sent together ({@link CounterTable#acquireMany()}) against a real
 * PostgreSQL server: each decided as if alone, a late one changing nothing, a failed statement
 * changing nothing, and the wired backend's callers admitting exactly each limit.
 */
class JdbcBatchedDecisionsTests {

    private static final long START = 1_700_000_000_000L;

    private static PostgresServer server;

    private static HikariDataSource pool;

    private static JdbcConnections connections;

    @BeforeAll
    static void startDatabase() {
        server = PostgresServer.start();
        pool = Databases.pool(server, 20);
        connections = new JdbcConnections(pool, 5_000, 5_000);
    }

    @AfterAll
    static void stopDatabase() {
        connections.close();
        pool.close();
        server.close();
    }

    /**
     * Seeded schedules at fixed times: groups of distinct keys (of two limits of different geometry)
     * sent as one statement decide exactly what the same calls decide one by one with the one-limit
     * upsert (which the backend's tests hold to the local backend's model).
     */
    @Test
    void aStatementOfSeveralDecidesEachAsTheOneLimitUpsertDoes() throws SQLException {
        CounterTable together = Databases.createTable(server, "batched_together");
        CounterTable alone = Databases.createTable(server, "batched_alone");
        for (long seed = 0; seed < 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long now = START + random.nextLong(0, 1_000_000);
            List<LimitDefinition> limits = List.of(
                    LimitDefinition.of("coarse-" + seed, random.nextLong(1, 20), Duration.ofMillis(300), 3),
                    LimitDefinition.of("fine-" + seed, random.nextLong(1, 20), Duration.ofMillis(200), 10));
            for (int step = 0; step < 60; step++) {
                now += random.nextInt(10) < 7 ? random.nextLong(0, 20) : random.nextLong(0, 400);
                List<LimitRequest> requests = new ArrayList<>();
                for (LimitDefinition limit : limits) {
                    for (int key = 0; key < 4; key++) {
                        if (random.nextInt(3) > 0) {
                            requests.add(new LimitRequest(limit, "k" + key, random.nextLong(1, limit.limit() + 1)));
                        }
                    }
                }
                if (requests.isEmpty()) {
                    continue;
                }
                Long[] times = new Long[requests.size()];
                java.util.Arrays.fill(times, now);
                Decisions[] decided;
                try (Connection connection = connections.open()) {
                    decided = CounterStatements.acquireMany(connections, connection, together, requests, times,
                            new Long[requests.size()]);
                }
                assertDecidedAsOneByOne(alone, requests, decided, now, "seed " + seed + " step " + step);
            }
        }
    }

    /**
     * Seeded schedules at fixed times: one key's calls sent as one statement of the acquire-each
     * function decide exactly what the same calls decide one after the other with the one-limit
     * upsert, a changed limit and a changed geometry included.
     */
    @Test
    void oneKeysCallsInOneStatementDecideEachAsTheOneLimitUpsertDoesInTurn() throws SQLException {
        CounterTable each = Databases.createTable(server, "each_together");
        CounterTable alone = Databases.createTable(server, "each_alone");
        for (long seed = 0; seed < 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            long now = START + random.nextLong(0, 1_000_000);
            LimitDefinition limit = LimitDefinition.of("each-" + seed, random.nextLong(1, 30), Duration.ofMillis(300), 6);
            for (int step = 0; step < 60; step++) {
                now += random.nextInt(10) < 7 ? random.nextLong(0, 20) : random.nextLong(0, 400);
                if (random.nextInt(20) == 0) {
                    limit = random.nextBoolean() ? limit.withLimit(random.nextLong(1, 30))
                            : LimitDefinition.of(limit.name(), limit.limit(), Duration.ofMillis(400), 4);
                }
                String key = "k" + random.nextInt(2);
                List<LimitRequest> requests = new ArrayList<>();
                for (int call = random.nextInt(1, 7); call > 0; call--) {
                    requests.add(new LimitRequest(limit, key, random.nextLong(1, limit.limit() + 1)));
                }
                Decisions[] decided;
                try (Connection connection = connections.open()) {
                    decided = CounterStatements.acquireEach(connections, connection, each, requests, now,
                            new Long[requests.size()]);
                }
                assertDecidedAsOneByOne(alone, requests, decided, now, "seed " + seed + " step " + step);
                for (Decisions one : decided) {
                    assertThat(one.generation()).as("seed %d step %d: the row's generation", seed, step)
                            .isEqualTo(decided[0].generation());
                }
            }
        }
    }

    @Test
    void aCallOfOneKeysStatementPastItsDeadlineChangesNothingAndTheOthersCount() throws SQLException {
        CounterTable table = Databases.createTable(server, "each_deadline");
        LimitDefinition limit = LimitDefinition.of("each-deadline", 10, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "k", 1), new LimitRequest(limit, "k", 3),
                new LimitRequest(limit, "k", 2));
        Decisions[] decided;
        try (Connection connection = connections.open()) {
            decided = CounterStatements.acquireEach(connections, connection, table, requests, START,
                    new Long[] { null, START - 1, START });
        }
        assertThat(decided[0].get(0).remaining()).isEqualTo(9);
        assertThat(decided[1]).as("past its deadline").isNull();
        assertThat(decided[2].get(0).remaining()).isEqualTo(7);
        try (Connection connection = connections.open()) {
            Decisions[] late = CounterStatements.acquireEach(connections, connection, table,
                    List.of(new LimitRequest(limit, "all-late", 1), new LimitRequest(limit, "all-late", 1)), START,
                    new Long[] { START - 1, START - 2 });
            assertThat(late).containsOnlyNulls();
        }
        try (JdbcBackend backend = JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), () -> START)) {
            assertThat(backend.usage(limit, "k").used()).as("the first and the third").isEqualTo(3);
            assertThat(backend.usage(limit, "all-late").used()).isZero();
        }
        try (Connection connection = pool.getConnection(); Statement query = connection.createStatement();
                java.sql.ResultSet rows = query.executeQuery("SELECT count(*) FROM each_deadline WHERE counter_key = 'all-late'")) {
            rows.next();
            assertThat(rows.getLong(1)).as("no row made when every caller stopped waiting").isZero();
        }
    }

    /**
     * Asserts that each request, sent alone with the one-limit upsert at the same time (on a table of
     * its own, in the same order), is decided as in one statement.
     */
    private static void assertDecidedAsOneByOne(CounterTable alone, List<LimitRequest> requests, Decisions[] decided,
            long now, String step) throws SQLException {
        for (int i = 0; i < requests.size(); i++) {
            Decisions expected;
            try (Connection connection = connections.open()) {
                expected = CounterStatements.acquireOne(connections, connection, alone, requests.get(i), now, null);
            }
            String described = String.format("%s call %d: %s %s cost %d", step, i, requests.get(i).limit().name(),
                    requests.get(i).key(), requests.get(i).cost());
            assertThat(decided[i].decisions()).as(described).isEqualTo(expected.decisions());
            assertThat(decided[i].decidedAtMillis()).as(described).isEqualTo(now);
        }
    }

    @Test
    void aDecisionTheStatementReachesAfterItsDeadlineChangesNothingAndTheOthersCount() throws SQLException {
        CounterTable table = Databases.createTable(server, "batched_deadline");
        LimitDefinition limit = LimitDefinition.of("deadline", 10, Duration.ofMinutes(1), 10);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, "a", 1), new LimitRequest(limit, "late", 3),
                new LimitRequest(limit, "c", 2));
        Decisions[] decided;
        try (Connection connection = connections.open()) {
            decided = CounterStatements.acquireMany(connections, connection, table, requests,
                    new Long[] { START, START, START }, new Long[] { null, START - 1, START });
        }
        assertThat(decided[0].allowed()).isTrue();
        assertThat(decided[1]).as("past its deadline").isNull();
        assertThat(decided[2].get(0).remaining()).isEqualTo(8);
        try (JdbcBackend backend = JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), () -> START)) {
            assertThat(backend.usage(limit, "a").used()).isEqualTo(1);
            assertThat(backend.usage(limit, "late").used()).as("nothing counted for the late one").isZero();
            assertThat(backend.usage(limit, "c").used()).isEqualTo(2);
        }
    }

    /**
     * A statement that fails (here a row another session holds past the lock wait) fails whole: the
     * free key it also carried is not counted either, so that its caller's failure policy decides
     * with nothing taken.
     */
    @Test
    void aStatementThatFailsCountsNoneOfItsDecisions() throws SQLException {
        CounterTable table = Databases.createTable(server, "batched_failing");
        LimitDefinition limit = LimitDefinition.of("failing", 10, Duration.ofMinutes(1), 10);
        JdbcConnections quick = new JdbcConnections(pool, 200, 200);
        try (JdbcBackend backend = JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), () -> START);
                Connection holder = pool.getConnection(); Statement hold = holder.createStatement()) {
            backend.tryAcquire(limit, "locked", 1);
            holder.setAutoCommit(false);
            hold.execute("SELECT * FROM batched_failing WHERE counter_key = 'locked' FOR UPDATE");
            List<LimitRequest> requests = List.of(new LimitRequest(limit, "free", 1),
                    new LimitRequest(limit, "locked", 1));
            try (Connection connection = quick.open()) {
                assertThatThrownBy(() -> CounterStatements.acquireMany(quick, connection, table, requests,
                        new Long[] { START, START }, new Long[2])).isInstanceOf(SQLException.class)
                        .extracting((ex) -> ((SQLException) ex).getSQLState()).isEqualTo(JdbcBackendException.LOCK_NOT_AVAILABLE);
            }
            holder.rollback();
            assertThat(backend.usage(limit, "free").used()).isZero();
            assertThat(backend.usage(limit, "locked").used()).isEqualTo(1);
        }
        finally {
            quick.close();
        }
    }

    /**
     * Two instances (two pools) on one database, 16 callers each, over few keys: what waits goes
     * together, and exactly each key's limit is admitted, which the database then holds.
     */
    @Test
    void callersOnTwoInstancesAdmitExactlyEachKeysLimitWhileTheirDecisionsGoTogether() throws Exception {
        CounterTable table = Databases.createTable(server, "batched_callers");
        LimitDefinition limit = LimitDefinition.of("together", 40, Duration.ofMinutes(1), 10);
        int keys = 12;
        try (HikariDataSource otherPool = Databases.pool(server, 10);
                JdbcBackend one = new JdbcBackend(pool, table, Duration.ofSeconds(5));
                JdbcBackend other = new JdbcBackend(otherPool, table, Duration.ofSeconds(5))) {
            ConcurrentCalls calls = ConcurrentCalls.run(32, 40, () -> {
                JdbcBackend instance = (Thread.currentThread().getId() % 2 == 0) ? one : other;
                return instance.tryAcquire(limit, "key-" + ThreadLocalRandom.current().nextInt(keys), 1).allowed();
            });
            assertThat(calls.failures()).hasValue(0);
            // 32 x 40 calls over 12 keys: each key far past its 40.
            assertThat(calls.admitted()).hasValue(keys * 40);
            for (int key = 0; key < keys; key++) {
                assertThat(one.usage(limit, "key-" + key).used()).as("key-" + key).isEqualTo(40);
            }
            long statements = one.batchCounts()[0] + other.batchCounts()[0];
            assertThat(statements).as("statements of several decisions").isPositive();
        }
    }

}
