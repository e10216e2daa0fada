package io.slidinglimiter.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.CpuBurner;
import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two application instances on one healthy database, on a host that other processes keep busy (two
 * spinning processes per core): 32 callers on one key of a {@code fail-open} limit, with the
 * defaults an application gets (100 ms timeout, 2 s max-wait, warmed at start). A healthy database
 * under a busy host must not cost the limit: at least the limit is admitted, and once the fallbacks'
 * reports land the database counts exactly what the two instances admitted, nothing that a caller
 * gave up on.
 */
class JdbcBusyHostTests {

    private PostgresServer server;

    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void startDatabase() {
        this.server = PostgresServer.start();
        Databases.createTable(this.server, CounterTable.DEFAULT_NAME);
    }

    @AfterEach
    void stopDatabase() throws Exception {
        for (int i = this.closing.size() - 1; i >= 0; i--) {
            this.closing.get(i).close();
        }
        this.server.close();
    }

    /** One application instance: its own pool of Spring Boot's default size, its backend warmed. */
    private ResilientBackend instance() {
        HikariDataSource pool = Databases.pool(this.server, 10);
        this.closing.add(pool);
        JdbcBackend jdbc = new JdbcBackend(pool, new CounterTable(CounterTable.DEFAULT_NAME), Duration.ofMillis(100));
        jdbc.warmUp();
        TimeSource clock = TimeSource.monotonic();
        ResilientBackend backend = new ResilientBackend(jdbc, new LocalBackend(clock, 1_000),
                new ResilientBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 100_000), clock,
                (limit) -> {
                }, jdbc::ping, null);
        this.closing.add(backend);
        return backend;
    }

    @Test
    void twoInstancesOnABusyHostAdmitAtLeastTheLimitAndTheDatabaseCountsExactlyWhatTheyAdmitted() throws Exception {
        LimitDefinition limit = LimitDefinition.of("busy", 2_000, Duration.ofMinutes(5), 10);
        ResilientBackend first = instance();
        ResilientBackend second = instance();
        ConcurrentCalls load;
        try (CpuBurner burner = CpuBurner.start()) {
            load = ConcurrentCalls.run(32, 100,
                    (thread, call) -> ((thread % 2 == 0) ? first : second).tryAcquire(limit, "hot", 1).allowed());
        }
        assertThat(load.failures()).hasValue(0);
        long admitted = load.admitted().get();
        long fallbacks = first.failoverStatus().fallbackDecisions() + second.failoverStatus().fallbackDecisions();
        System.out.printf("busy host: %d of %d admitted, %d by the failure policy%n", admitted, 32 * 100, fallbacks);
        assertThat(admitted).as("at least the limit").isGreaterThanOrEqualTo(2_000);
        try (HikariDataSource reader = Databases.pool(this.server, 1);
                JdbcBackend database = new JdbcBackend(reader, new CounterTable(CounterTable.DEFAULT_NAME),
                        Duration.ofSeconds(5))) {
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                first.tryAcquire(limit, "other", 1);
                second.tryAcquire(limit, "other", 1);
                assertThat(database.usage(limit, "hot").used()).as("the database's count, reports landed")
                        .isEqualTo(admitted);
            });
        }
    }

}
