package io.slidinglimiter.jdbc;

import java.time.Duration;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.LeaseCounts;
import io.slidinglimiter.failover.LeaseGrant;
import io.slidinglimiter.failover.LeaseState;
import io.slidinglimiter.failover.Leases;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The core's leases over the database backend, against a real PostgreSQL server: the same numbers as
 * over Redis, at fixed times; and on the database's own clock, two instances with leases never admit
 * more than the limit and leave counted exactly what they admitted.
 */
class JdbcLeasesTests {

    private static final long START = 1_800_000_000_000L;

    private static PostgresServer server;

    private static HikariDataSource pool;

    private static CounterTable table;

    private final ManualTimeSource clock = new ManualTimeSource(START);

    @BeforeAll
    static void startDatabase() {
        server = PostgresServer.start();
        pool = Databases.pool(server, 20);
        table = Databases.createTable(server, CounterTable.DEFAULT_NAME);
    }

    @AfterAll
    static void stopDatabase() {
        pool.close();
        server.close();
    }

    @Test
    void aHotKeyIsAdmittedFromItsLeaseWithoutStatements() {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientBackend instance = instance(atTime());
        assertThat(instance.tryAcquire(limit, "hot", 1).remaining()).isEqualTo(999);
        this.clock.advanceMillis(10);
        // One call in the 10 ms before: 0.1 a millisecond, 990 ms left in the sub-window: 99 more.
        Decision taking = instance.tryAcquire(limit, "hot", 1);
        assertThat(taking.allowed()).isTrue();
        assertThat(taking.remaining()).as("the lease's permits are not used yet").isEqualTo(998);
        assertThat(instance.failoverStatus().leaseState("api", "hot").left()).isEqualTo(99);
        for (int i = 1; i <= 99; i++) {
            Decision decision = instance.tryAcquire(limit, "hot", 1);
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(998 - i);
        }
        // Below a quarter left, a top-up: 77 used in no time is a high rate, so it asks for the limit and
        // the database gives half of what is left, (1000 - 101) / 2.
        assertThat(instance.failoverStatus().leaseState("api", "hot")).isEqualTo(new LeaseState(true, 449, 549, 988));
        assertThat(instance.usage(limit, "hot").used()).isEqualTo(101 + 449);
        assertThat(instance.failoverStatus().leaseCounts("api")).as("99 calls without a statement")
                .isEqualTo(new LeaseCounts(99, 2, 2, 0, 0));
    }

    @Test
    void whatALeaseDidNotAdmitIsGivenBackToItsSubWindowWhenItEnds() {
        LimitDefinition limit = LimitDefinition.of("given-back", 1000, Duration.ofSeconds(10), 10);
        ResilientBackend instance = instance(atTime());
        lease(instance, limit, "k");
        assertThat(instance.tryAcquire(limit, "k", 1).allowed()).isTrue();
        assertThat(instance.usage(limit, "k").used()).as("counted at once").isGreaterThan(3);
        this.clock.advanceMillis(1_000);
        instance.sweepLeases();
        assertThat(instance.failoverStatus().leaseState("given-back", "k").held()).isFalse();
        assertThat(instance.usage(limit, "k").used()).isEqualTo(3);
        assertThat(instance.failoverStatus().leaseCounts("given-back").givenBack()).isPositive();
        // Given back to the sub-window it came from: it leaves the window with it, not later.
        this.clock.advanceMillis(9_000);
        assertThat(instance.usage(limit, "k").used()).isZero();
    }

    @Test
    void aKeyNearItsLimitIsDecidedPermitByPermit() {
        LimitDefinition limit = LimitDefinition.of("near", 10, Duration.ofSeconds(10), 10);
        try (JdbcBackend database = atTime()) {
            LeaseGrant first = lease(database, limit, 1, 100);
            // Half of what is left after the call: (10 - 1) / 2 = 4 more.
            assertThat(first.taken()).isEqualTo(5);
            assertThat(first.decision().remaining()).isEqualTo(5);
            assertThat(first.subWindowEndMillis()).isEqualTo(START + 1_000);
            // Then 1 + (10 - 6) / 2, and the last two permits one by one.
            for (long taken : new long[] { 3, 1, 1 }) {
                LeaseGrant next = lease(database, limit, 1, 100);
                assertThat(next.decision().allowed()).isTrue();
                assertThat(next.taken()).isEqualTo(taken);
            }
            LeaseGrant rejected = lease(database, limit, 1, 100);
            assertThat(rejected.decision().allowed()).isFalse();
            assertThat(rejected.taken()).isZero();
            assertThat(database.usage(limit, "k").used()).isEqualTo(10);
        }
    }

    @Test
    void aGiveBackToACounterResetSinceGivesNothing() {
        LimitDefinition limit = LimitDefinition.of("reset", 100, Duration.ofSeconds(10), 10);
        try (JdbcBackend database = atTime()) {
            LeaseGrant grant = lease(database, limit, 1, 50);
            assertThat(grant.taken()).isEqualTo(50);
            database.reset(limit, "k");
            this.clock.advanceMillis(1);
            database.tryAcquire(limit, "k", 1);
            database.giveBack(limit, "k", grant, 49).toCompletableFuture().join();
            assertThat(database.usage(limit, "k").used()).as("the new counter's own permit").isEqualTo(1);
        }
    }

    @Test
    void aResetEndsTheLeaseHereAtOnce() {
        LimitDefinition limit = LimitDefinition.of("forgotten", 1000, Duration.ofSeconds(10), 10);
        ResilientBackend instance = instance(atTime());
        lease(instance, limit, "k");
        assertThat(instance.failoverStatus().leaseState("forgotten", "k").held()).isTrue();
        instance.reset(limit, "k");
        assertThat(instance.failoverStatus().leaseState("forgotten", "k").held()).isFalse();
        assertThat(instance.usage(limit, "k").used()).isZero();
    }

    /**
     * On the database's clock, two instances (two pools) of eight threads each with leases on one hot
     * key: never more than the limit, and once both close (giving back what their leases hold), the
     * database holds exactly what they admitted.
     */
    @Test
    void twoInstancesWithLeasesAdmitAtMostTheLimitAndLeaveExactlyWhatTheyAdmitted() throws Exception {
        LimitDefinition limit = LimitDefinition.of("shared-hot", 3_000, Duration.ofMinutes(10), 10);
        try (HikariDataSource otherPool = Databases.pool(server, 10)) {
            JdbcBackend first = new JdbcBackend(pool, table, Duration.ofSeconds(5));
            JdbcBackend second = new JdbcBackend(otherPool, table, Duration.ofSeconds(5));
            ResilientBackend one = instance(first, TimeSource.monotonic());
            ResilientBackend two = instance(second, TimeSource.monotonic());
            ConcurrentCalls calls = ConcurrentCalls.run(16, 400, () -> {
                ResilientBackend instance = (Thread.currentThread().getId() % 2 == 0) ? one : two;
                return instance.tryAcquire(limit, "hot", 1).allowed();
            });
            assertThat(calls.failures()).hasValue(0);
            assertThat(calls.admitted().get()).isBetween(1, 3_000);
            long fromLeases = one.failoverStatus().leaseCounts("shared-hot").fromLease()
                    + two.failoverStatus().leaseCounts("shared-hot").fromLease();
            assertThat(fromLeases).as("admitted without a statement").isPositive();
            one.close();
            two.close();
            try (JdbcBackend reader = new JdbcBackend(pool, table, Duration.ofSeconds(5))) {
                assertThat(reader.usage(limit, "hot").used()).isEqualTo((long) calls.admitted().get());
            }
        }
    }

    /** Two calls 10 ms apart: the second takes a lease. */
    private void lease(ResilientBackend instance, LimitDefinition limit, String key) {
        instance.tryAcquire(limit, key, 1);
        this.clock.advanceMillis(10);
        instance.tryAcquire(limit, key, 1);
    }

    /** Takes a lease of key {@code k} on this thread. */
    private static LeaseGrant lease(JdbcBackend database, LimitDefinition limit, long cost, long wanted) {
        return database.lease(limit, "k", cost, wanted, null).toCompletableFuture().join();
    }

    private JdbcBackend atTime() {
        return JdbcBackend.atTime(pool, table, Duration.ofSeconds(5), this.clock::currentTimeMillis);
    }

    private ResilientBackend instance(JdbcBackend database) {
        return instance(database, this.clock);
    }

    private ResilientBackend instance(JdbcBackend database, TimeSource time) {
        return new ResilientBackend(database, new LocalBackend(time, 1_000),
                new ResilientBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 500, 1_000), time, (limit) -> {
                }, null, new Leases(database, time, (name) -> true, 1_000, false));
    }

}
