package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.CapturedLog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The database backend as applications get it, against a client that sends whatever a request can
 * carry: keys longer than an index row holds, NUL bytes, surrogates without their pair. Every key is
 * its own row, decided exactly; a call's own failure (its row held by another session) never keeps
 * the breaker's probe; one key that the database cannot count never holds back the other keys'
 * reports; a refusal from the denial cache tells the database's wait, not the cache's.
 */
class JdbcHostileClientTests {

    /** The test's own server, pool and table. */
    @RegisterExtension
    final Databases.Own database = new Databases.Own();

    private final AtomicInteger fallbacks = new AtomicInteger();

    /**
     * The backend as an application gets it: the policy, a breaker of 3 failures and 500 ms on
     * {@code clock}, the denial cache; {@code probe} tells whether an outage's probe runs.
     */
    private ResilientBackend instance(FailurePolicy policy, TimeSource clock, boolean probe, Duration timeout) {
        JdbcBackend jdbc = new JdbcBackend(this.database.pool, this.database.table, timeout);
        ResilientBackend backend = new ResilientBackend(jdbc, new LocalBackend(clock, 1_000),
                new ResilientBackend.Settings(policy, Map.of(), 3, 500, 1_000), clock,
                (limit) -> this.fallbacks.incrementAndGet(), probe ? jdbc::ping : null, null);
        this.database.closing(backend);
        return backend;
    }

    /** Reads the database's count on a connection of its own. */
    private long usedInDatabase(LimitDefinition limit, String key) {
        try (HikariDataSource reader = Databases.pool(this.database.server, 1);
                JdbcBackend backend = new JdbcBackend(reader, this.database.table, Duration.ofSeconds(5))) {
            return backend.usage(limit, key).used();
        }
    }

    private long rows() throws Exception {
        try (Connection connection = this.database.pool.getConnection(); Statement statement = connection.createStatement();
                var result = statement.executeQuery("SELECT count(*) FROM limiter_counters")) {
            result.next();
            return result.getLong(1);
        }
    }

    /** Keys a hostile client sends, each of which must be a row of its own. */
    private static List<String> hostileKeys() {
        Random random = new Random(70);
        StringBuilder longKey = new StringBuilder();
        while (longKey.length() < 3_000) {
            longKey.append((char) ('a' + random.nextInt(26)));
        }
        List<String> keys = new ArrayList<>();
        keys.add(longKey.toString());
        // The same long key but its last character: its digest, not a prefix, tells them apart.
        keys.add(longKey.substring(0, longKey.length() - 1) + "!");
        keys.add("é".repeat(1_500));
        keys.add("a\0b");
        keys.add("a");
        keys.add("\0");
        keys.add("sur?");
        keys.add("sur\ud800");
        keys.add("sur\udfff");
        keys.add("sur\ud83d\ude00");
        keys.add("sha256:looks-like-a-digest");
        keys.add("x".repeat(200));
        keys.add("x".repeat(201));
        keys.add("k".repeat(64 * 1024));
        keys.add("'; DROP TABLE limiter_counters; --");
        return keys;
    }

    /**
     * Long keys (past PostgreSQL's index row), NUL bytes and lone surrogates are each a row of their
     * own: three admitted, the fourth refused, none shared with another key, nothing failed over, no
     * breaker and no outage; a peek and a reset of such a key answer too.
     */
    @Test
    void anyKeyARequestCanCarryIsItsOwnRowDecidedExactly() throws Exception {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN, TimeSource.monotonic(), true,
                Duration.ofSeconds(5));
        LimitDefinition limit = LimitDefinition.of("hostile", 3, Duration.ofMinutes(5), 10);
        Map<String, List<Boolean>> decided = new LinkedHashMap<>();
        for (String key : hostileKeys()) {
            List<Boolean> allowed = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                allowed.add(backend.tryAcquire(limit, key, 1).allowed());
            }
            decided.put(key, allowed);
        }
        assertThat(decided).allSatisfy((key, allowed) ->
                assertThat(allowed).as("key of %d chars", key.length()).containsExactly(true, true, true, false));
        assertThat(this.fallbacks).as("nothing failed over").hasValue(0);
        assertThat(backend.failoverStatus().isCircuitOpen()).isFalse();
        assertThat(backend.failoverStatus().isFailing()).isFalse();
        assertThat(rows()).as("a row each").isEqualTo(hostileKeys().size());
        for (String key : hostileKeys()) {
            assertThat(usedInDatabase(limit, key)).isEqualTo(3);
        }
        backend.reset(limit, "a\0b");
        assertThat(backend.peek(limit, "a\0b").remaining()).isEqualTo(3);
        assertThat(backend.peek(limit, "a").remaining()).as("another key keeps its count").isZero();
    }

    /**
     * The breaker opens on three failures of the database's own (a trigger here answers keys named
     * {@code down-...} with 53000, insufficient resources); then the half-open probe meets a row another
     * session holds (55P03): the call's own failure, which gives the probe back, so the next call
     * probes, succeeds and closes the breaker. Before, the probe was never ended and every later call
     * followed the policy until a restart.
     */
    @Test
    void aProbeThatMeetsARowAnotherSessionHoldsGivesTheProbeBack() throws Exception {
        try (Connection session = this.database.pool.getConnection(); Statement ddl = session.createStatement()) {
            ddl.execute("CREATE FUNCTION out_of_resources() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " IF NEW.counter_key LIKE 'down-%' THEN RAISE EXCEPTION 'out of resources' USING ERRCODE = '53000';"
                    + " END IF; RETURN NEW; END $$");
            ddl.execute("CREATE TRIGGER out_of_resources BEFORE INSERT OR UPDATE ON limiter_counters"
                    + " FOR EACH ROW EXECUTE FUNCTION out_of_resources()");
        }
        ManualTimeSource clock = new ManualTimeSource(1_000_000);
        ResilientBackend backend = instance(FailurePolicy.FAIL_CLOSED, clock, false, Duration.ofMillis(500));
        LimitDefinition limit = LimitDefinition.of("probed", 100, Duration.ofMinutes(5), 10);
        assertThat(backend.tryAcquire(limit, "held", 1).allowed()).isTrue();
        for (int i = 0; i < 3; i++) {
            assertThat(backend.tryAcquire(limit, "down-" + i, 1).allowed()).as("fail-closed").isFalse();
        }
        assertThat(backend.failoverStatus().isCircuitOpen()).isTrue();
        try (HikariDataSource other = Databases.pool(this.database.server, 1); Connection session = other.getConnection()) {
            session.setAutoCommit(false);
            try (PreparedStatement lock = session.prepareStatement("SELECT * FROM limiter_counters"
                    + " WHERE limit_name = 'probed' AND counter_key = 'held' FOR UPDATE")) {
                lock.executeQuery().close();
            }
            clock.advanceMillis(501);
            assertThat(backend.tryAcquire(limit, "held", 1).allowed()).as("the probe meets the lock").isFalse();
            assertThat(backend.failoverStatus().isCircuitOpen()).as("the lock is the key's: no new pause").isTrue();
            assertThat(backend.tryAcquire(limit, "fresh", 1).allowed()).as("the next call probes again")
                    .isTrue();
            assertThat(backend.failoverStatus().isCircuitOpen()).isFalse();
            session.rollback();
        }
        assertThat(backend.tryAcquire(limit, "held", 1).allowed()).isTrue();
        assertThat(usedInDatabase(limit, "held")).isEqualTo(2);
        assertThat(usedInDatabase(limit, "fresh")).isEqualTo(1);
    }

    /**
     * Fallback admissions of many keys are reported together once the database is back; one key
     * whose row the database refuses (a trigger here raises a data exception for it) is reported
     * alone, logged once and dropped, and every other key's admissions land.
     */
    @Test
    void oneKeyTheDatabaseCannotCountNeverHoldsBackTheOthersReports() throws Exception {
        try (Connection session = this.database.pool.getConnection(); Statement ddl = session.createStatement()) {
            ddl.execute("CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " IF NEW.counter_key = 'poison' THEN RAISE EXCEPTION 'poisoned' USING ERRCODE = '22023';"
                    + " END IF; RETURN NEW; END $$");
            ddl.execute("CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON limiter_counters"
                    + " FOR EACH ROW EXECUTE FUNCTION refuse_poison()");
        }
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN, TimeSource.monotonic(), true,
                Duration.ofMillis(200));
        LimitDefinition limit = LimitDefinition.of("reported", 5, Duration.ofMinutes(5), 10);
        assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).isTrue();
        try (CapturedLog log = new CapturedLog("io.slidinglimiter.failover.UnreportableKeys")) {
            this.database.server.stopImmediately();
            for (int i = 0; i < 4; i++) {
                assertThat(backend.tryAcquire(limit, "poison", 1).allowed()).as("fail-open while stopped").isTrue();
                assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).as("fail-open while stopped").isTrue();
            }
            this.database.server.startAgain();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(usedInDatabase(limit, "victim")).as("1 before and 4 fail-open").isEqualTo(5));
            assertThat(backend.tryAcquire(limit, "victim", 1).allowed()).as("at its limit in the database")
                    .isFalse();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(log.records).singleElement().satisfies((record) ->
                            assertThat(record.getMessage()).contains("limit 'reported'", "poisoned")));
        }
        assertThat(usedInDatabase(limit, "poison")).isZero();
    }

    /**
     * A key out of permits for minutes: the refusal the denial cache answers tells the database's
     * wait, counted from when it was said, not the cache's own second.
     */
    @Test
    void aRefusalFromTheDenialCacheTellsTheDatabasesWait() {
        ResilientBackend backend = instance(FailurePolicy.FAIL_OPEN, TimeSource.monotonic(), true,
                Duration.ofSeconds(5));
        LimitDefinition limit = LimitDefinition.of("waited", 1, Duration.ofMinutes(5), 10);
        assertThat(backend.tryAcquire(limit, "k", 1).allowed()).isTrue();
        Decision fromDatabase = backend.tryAcquire(limit, "k", 1);
        Decision fromCache = backend.tryAcquire(limit, "k", 1);
        assertThat(fromDatabase.allowed()).isFalse();
        assertThat(fromCache.allowed()).isFalse();
        assertThat(fromDatabase.retryAfterMillis()).isGreaterThan(Duration.ofMinutes(4).toMillis());
        assertThat(fromCache.retryAfterMillis()).as("the database's wait, not the cache's second")
                .isGreaterThan(Duration.ofMinutes(4).toMillis())
                .isLessThanOrEqualTo(fromDatabase.retryAfterMillis());
        assertThat(fromCache.resetAfterMillis()).isGreaterThanOrEqualTo(fromCache.retryAfterMillis());
    }

}
