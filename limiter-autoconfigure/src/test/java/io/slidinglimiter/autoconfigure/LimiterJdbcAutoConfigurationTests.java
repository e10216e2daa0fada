package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.actuate.RateLimiterHealthIndicator;
import io.slidinglimiter.actuate.RateLimitersEndpoint;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.NamedBackend;
import io.slidinglimiter.jdbc.CounterTable;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Application contexts ("instances") on a real PostgreSQL server that the test makes and starts on a
 * port of its own, through Spring Boot's DataSource (Hikari).
 */
class LimiterJdbcAutoConfigurationTests {

    private static PostgresServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, LimiterJdbcAutoConfiguration.class,
                    LimiterAutoConfiguration.class, LimiterMetricsAutoConfiguration.class,
                    LimiterActuatorAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("limiter.backend=jdbc", "limiter.jdbc.timeout=5s", "limiter.jdbc.initialize-schema=always",
                    "limiter.limits.shared.limit=300", "limiter.limits.shared.window=1m",
                    "limiter.limits.here.limit=2", "limiter.limits.here.window=1m", "limiter.limits.here.backend=local");

    @BeforeAll
    static void startDatabase() {
        server = PostgresServer.start();
    }

    @AfterAll
    static void stopDatabase() {
        server.close();
    }

    private ApplicationContextRunner onTheDatabase() {
        return this.runner.withPropertyValues("spring.datasource.url=" + server.jdbcUrl());
    }

    @Test
    void twoInstancesOnOneDatabaseAdmitExactlyTheLimitBetweenThem() {
        onTheDatabase().run((first) -> onTheDatabase().run((second) -> {
            assertThat(first).hasNotFailed().hasBean("limiterJdbcBackend");
            assertThat(first.getBean("limiterJdbcBackend", NamedBackend.class).name()).isEqualTo("jdbc");
            RateLimiters one = first.getBean(RateLimiters.class);
            RateLimiters other = second.getBean(RateLimiters.class);
            one.reset("shared", "k");
            ConcurrentCalls calls = ConcurrentCalls.run(8, 60, () -> ((Thread.currentThread().getId() % 2 == 0) ? one
                    : other).tryAcquire("shared", "k").allowed());
            assertThat(calls.admitted()).hasValue(300);
            assertThat(calls.failures()).hasValue(0);
            assertThat(first.getBean(MeterRegistry.class).get("limiter.backend.duration").tag("backend", "jdbc").timer()
                    .count()).as("timed as backend=jdbc").isPositive();
            assertThat(one.tryAcquire("here", "k").allowed()).as("a local limit stays local").isTrue();
        }));
    }

    /**
     * Sixteen callers of one limit on many keys: what waits behind the upserts in flight goes
     * together by default, and alone with limiter.jdbc.batching=false; exactly the limit either way.
     */
    @Test
    void callsThatWaitGoTogetherUnlessBatchingIsOff() {
        for (boolean batching : new boolean[] { true, false }) {
            onTheDatabase().withPropertyValues("limiter.jdbc.batching=" + batching).run((context) -> {
                RateLimiters limiters = context.getBean(RateLimiters.class);
                for (int key = 0; key < 8; key++) {
                    limiters.reset("shared", "batch-" + key);
                }
                ConcurrentCalls calls = ConcurrentCalls.run(16, 200,
                        () -> limiters.tryAcquire("shared", "batch-" + ThreadLocalRandom.current().nextInt(8)).allowed());
                assertThat(calls.admitted()).hasValue(8 * 300);
                assertThat(calls.failures()).hasValue(0);
                long statements = context.getBean(LimiterJdbcAutoConfiguration.LimiterJdbc.class).jdbc().batchCounts()[0];
                if (batching) {
                    assertThat(statements).as("statements of several calls").isPositive();
                }
                else {
                    assertThat(statements).as("statements of several calls").isZero();
                }
                MeterRegistry meters = new SimpleMeterRegistry();
                context.getBean("limiterJdbcBatchMeters", MeterBinder.class).bindTo(meters);
                assertThat(meters.get("limiter.jdbc.batches").functionCounter().count()).isEqualTo(statements);
                assertThat(meters.get("limiter.jdbc.batched.decisions").functionCounter().count())
                        .as("decisions those statements carried").isGreaterThanOrEqualTo(2.0 * statements);
            });
        }
    }

    @Test
    void aLimitChangedAtRunTimeReachesTheOtherInstanceThroughTheDatabase() {
        onTheDatabase().run((first) -> onTheDatabase().run((second) -> {
            LimitChanges changes = first.getBean(LimitChanges.class);
            assertThat(changes.isShared()).isTrue();
            assertThat(changes.serverName()).isEqualTo("PostgreSQL");
            changes.change("shared", 450);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(second.getBean(LimitRegistry.class).get("shared").limit()).isEqualTo(450));
            changes.revert("shared");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(second.getBean(LimitRegistry.class).get("shared").limit()).isEqualTo(300));
        }));
    }

    @Test
    void healthIsUpWithTheTableAndEachLimitsPolicy() {
        onTheDatabase().withPropertyValues("limiter.limits.shared.on-failure=fail-closed").run((context) -> {
            Health health = context.getBean(RateLimiterHealthIndicator.class).health(true);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("jdbc", "UP").containsEntry("table", "limiter_counters")
                    .containsEntry("limits", Map.of("shared", "fail-closed"));
            // A limit an annotation defines is registered at run time: health lists it with the default policy.
            context.getBean(LimitRegistry.class).register(LimitDefinition.of("annotated", 5, Duration.ofSeconds(10), 10));
            Health later = context.getBean(RateLimiterHealthIndicator.class).health(true);
            assertThat(later.getDetails()).containsEntry("limits", Map.of("shared", "fail-closed", "annotated",
                    later.getDetails().get("onFailure")));
        });
    }

    /**
     * A database of its own, stopped at once under a running context: health goes DOWN with the error
     * once a decision fails there (the fail-open decision admits), and UP again once the database is
     * back, without a restart.
     */
    @Test
    void healthIsDownWhileTheDatabaseFailsDecisionsAndUpOnceItAnswers() {
        try (PostgresServer own = PostgresServer.start()) {
            this.runner.withPropertyValues("spring.datasource.url=" + own.jdbcUrl(), "limiter.jdbc.timeout=200ms")
                    .run((context) -> {
                        RateLimiters limiters = context.getBean(RateLimiters.class);
                        RateLimiterHealthIndicator health = context.getBean(RateLimiterHealthIndicator.class);
                        assertThat(limiters.tryAcquire("shared", "k").allowed()).isTrue();
                        own.stopImmediately();
                        assertThat(limiters.tryAcquire("shared", "k").allowed()).as("fail-open").isTrue();
                        Health down = health.health(true);
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(down.getDetails()).containsEntry("jdbc", "DOWN").containsKey("error");
                        own.startAgain();
                        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                            limiters.tryAcquire("shared", "k");
                            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
                        });
                    });
        }
    }

    @Test
    void aMissingTableFailsTheStartWithTheDdlAndBothWaysToCreateIt() {
        onTheDatabase().withPropertyValues("limiter.jdbc.initialize-schema=never", "limiter.jdbc.table=not_created")
                .run((context) -> {
                    FailureAnalysis analysis = FailureAnalysisAccess.of(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("limiter.jdbc.table").contains("not_created");
                    assertThat(analysis.getAction()).contains("classpath:io/slidinglimiter/jdbc/schema-postgresql.sql")
                            .contains("limiter.jdbc.initialize-schema=always");
                });
    }

    /** A table made by the DDL before its newest function fails the start until the DDL runs again. */
    @Test
    void aTableOfAnOlderDdlFailsTheStartUntilTheDdlRunsAgain() {
        server.execute(new CounterTable("older_ddl").schema());
        server.execute("DROP FUNCTION older_ddl_acquire_each");
        onTheDatabase().withPropertyValues("limiter.jdbc.initialize-schema=never", "limiter.jdbc.table=older_ddl")
                .run((context) -> {
                    FailureAnalysis analysis = FailureAnalysisAccess.of(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("older_ddl").contains("_acquire_each")
                            .contains("older DDL");
                    assertThat(analysis.getAction()).contains("limiter.jdbc.initialize-schema=always");
                });
        onTheDatabase().withPropertyValues("limiter.jdbc.initialize-schema=always", "limiter.jdbc.table=older_ddl")
                .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aTableNameSqlCannotTakeFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(onTheDatabase().withPropertyValues("limiter.jdbc.table=x; drop table y"),
                (description) -> assertThat(description).contains("limiter.jdbc.table").contains("not a table name"));
    }

    /**
     * The endpoint resets a key a hostile client sent (a NUL byte, a lone surrogate, a key past the
     * index row's size) like any other (before, a NUL answered 503 "did not answer"); a reset the
     * database cannot take says what happened.
     */
    @Test
    void theEndpointResetsAnyKeyAndSaysWhatTheDatabaseSaidWhenItFails() {
        try (PostgresServer own = PostgresServer.start()) {
            this.runner.withPropertyValues("spring.datasource.url=" + own.jdbcUrl(), "limiter.jdbc.timeout=500ms",
                    "limiter.limits.five.limit=5", "limiter.limits.five.window=1m", "spring.jmx.enabled=true",
                    "management.endpoints.jmx.exposure.include=ratelimiters").run((context) -> {
                        RateLimiters limiters = context.getBean(RateLimiters.class);
                        RateLimitersEndpoint endpoint = context.getBean(RateLimitersEndpoint.class);
                        for (String key : new String[] { "a\0b", "sur\ud800", "k".repeat(3_000) }) {
                            for (int i = 0; i < 5; i++) {
                                assertThat(limiters.tryAcquire("five", key).allowed()).isTrue();
                            }
                            assertThat(limiters.tryAcquire("five", key).allowed()).isFalse();
                            assertThat(endpoint.reset("five", key).getStatus()).isEqualTo(204);
                            assertThat(limiters.tryAcquire("five", key).allowed()).as("reset").isTrue();
                        }
                        own.stopImmediately();
                        var failed = endpoint.reset("five", "a\0b");
                        assertThat(failed.getStatus()).isEqualTo(503);
                        assertThat((String) failed.getBody().get("error")).startsWith("The key was not reset:"
                                + " PostgreSQL did not answer (").contains("SQLSTATE 08").contains("Try again");
                    });
        }
    }

    /** A word PostgreSQL reserves is a syntax error in every statement: the start fails, naming it. */
    @Test
    void aTableNamePostgresqlReservesFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(onTheDatabase().withPropertyValues("limiter.jdbc.table=order"),
                (description) -> assertThat(description).contains("limiter.jdbc.table").contains("'order'")
                        .contains("reserves"));
    }

    /**
     * A user that may not use the table (made by another user, no grant) fails the start naming what it
     * lacks; once granted, the same application starts.
     */
    @Test
    void aUserWithoutPrivilegesOnTheTableFailsTheStartNamingWhatItLacks() {
        server.execute(new CounterTable("not_granted").schema());
        server.execute("DROP ROLE IF EXISTS not_granted_user; CREATE ROLE not_granted_user LOGIN");
        ApplicationContextRunner asTheUser = this.runner.withPropertyValues("spring.datasource.url="
                + server.jdbcUrl().replace("user=" + PostgresServer.USER, "user=not_granted_user"),
                "limiter.jdbc.initialize-schema=never", "limiter.jdbc.table=not_granted");
        asTheUser.run((context) -> {
            FailureAnalysis analysis = FailureAnalysisAccess.of(context.getStartupFailure());
            assertThat(analysis.getDescription()).contains("limiter.jdbc.table").contains("not_granted_user lacks")
                    .contains("SELECT ON not_granted").contains("UPDATE ON not_granted_limits");
            assertThat(analysis.getAction()).contains("GRANT SELECT, INSERT, UPDATE, DELETE ON not_granted");
        });
        server.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON not_granted, not_granted_limits TO not_granted_user");
        asTheUser.run((context) -> assertThat(context).hasNotFailed());
    }

    /**
     * {@code initialize-schema: always} for a user that may not create in the schema: the database's
     * refusal fails the start naming the property, not "could not reach the database".
     */
    @Test
    void aSchemaTheUserMayNotCreateInFailsTheStartUnderInitializeSchemaAlways() {
        server.execute("DROP ROLE IF EXISTS no_create_user; CREATE ROLE no_create_user LOGIN;"
                + " REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        this.runner.withPropertyValues("spring.datasource.url="
                + server.jdbcUrl().replace("user=" + PostgresServer.USER, "user=no_create_user"),
                "limiter.jdbc.initialize-schema=always", "limiter.jdbc.table=never_created").run((context) -> {
                    FailureAnalysis analysis = FailureAnalysisAccess.of(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("limiter.jdbc.initialize-schema")
                            .contains("refused").contains("42501");
                    assertThat(analysis.getAction()).contains("schema-postgresql.sql")
                            .contains("limiter.jdbc.initialize-schema=never");
                });
    }

    @Test
    void aDatabaseOtherThanPostgresqlFailsTheStartNamingTheSupportedOnes() {
        FailureAnalysisAccess.assertStartFails(this.runner.withPropertyValues("spring.datasource.url=jdbc:h2:mem:other"),
                (description) -> assertThat(description).contains("limiter.backend").contains("H2")
                        .contains("PostgreSQL 15 or later"));
    }

    /**
     * {@code limiter.jdbc.lease}: two instances' calls of one hot key are admitted from leases, never
     * over the limit; the endpoint and the meters say so; once both stop (giving back what their
     * leases hold) the database holds exactly what they admitted.
     */
    @Test
    void leasesOnTheDatabaseAdmitWithoutStatementsAndLeaveExactlyWhatWasAdmitted() {
        ApplicationContextRunner leasing = onTheDatabase().withPropertyValues("limiter.jdbc.lease=true",
                "limiter.limits.hot.limit=2000", "limiter.limits.hot.window=10m",
                "spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimiters");
        AtomicInteger admitted = new AtomicInteger();
        leasing.run((first) -> leasing.run((second) -> {
            RateLimiters one = first.getBean(RateLimiters.class);
            RateLimiters other = second.getBean(RateLimiters.class);
            ConcurrentCalls calls = ConcurrentCalls.run(8, 400, () -> ((Thread.currentThread().getId() % 2 == 0) ? one
                    : other).tryAcquire("hot", "k").allowed());
            assertThat(calls.failures()).hasValue(0);
            assertThat(calls.admitted().get()).isBetween(1, 2000);
            admitted.set(calls.admitted().get());
            Map<String, Object> hot = first.getBean(RateLimitersEndpoint.class).limit("hot", "k", null).getBody();
            assertThat(hot).extractingByKey("lease").asInstanceOf(InstanceOfAssertFactories.MAP)
                    .containsKeys("fromLease", "fromDatabase", "leasesTaken", "givenBack", "lost");
            assertThat(hot).extractingByKey("key").asInstanceOf(InstanceOfAssertFactories.MAP).containsKey("lease");
            double fromLease = first.getBean(MeterRegistry.class).get("limiter.lease.decisions").tag("limit", "hot")
                    .tag("source", "lease").functionCounter().count()
                    + second.getBean(MeterRegistry.class).get("limiter.lease.decisions").tag("limit", "hot")
                            .tag("source", "lease").functionCounter().count();
            assertThat(fromLease).as("admitted from leases, without a statement").isPositive();
        }));
        leasing.run((reader) -> assertThat(reader.getBean(RateLimiters.class).usage("hot", "k").used())
                .as("given back at stop").isEqualTo(admitted.get()));
    }

    @Test
    void aLeaseOfASlidingLogOnTheDatabaseFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(onTheDatabase().withPropertyValues("limiter.limits.shared.lease=true",
                "limiter.limits.shared.algorithm=sliding-log"),
                (description) -> assertThat(description).contains("limiter.limits.shared.lease").contains("sliding-log"));
    }

    @Test
    void invalidDatabaseSettingsFailTheStartNamingEachProperty() {
        FailureAnalysisAccess.assertStartFails(onTheDatabase().withPropertyValues("limiter.jdbc.timeout=0s",
                "limiter.jdbc.failure-threshold=0", "limiter.jdbc.denial-cache-size=-1"), (description) -> assertThat(
                        description).contains("limiter.jdbc.timeout").contains("limiter.jdbc.failure-threshold")
                                .contains("limiter.jdbc.denial-cache-size"));
    }

    @Test
    void aMaxWaitShorterThanTheTimeoutFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(onTheDatabase().withPropertyValues("limiter.jdbc.timeout=1s",
                "limiter.jdbc.max-wait=500ms"), (description) -> assertThat(description).contains("limiter.jdbc.max-wait")
                        .contains("shorter than limiter.jdbc.timeout"));
    }

    @Test
    void withoutADataSourceTheStartSaysWhatToAdd() {
        FailureAnalysisAccess.assertStartFails(new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LimiterJdbcAutoConfiguration.class, LimiterAutoConfiguration.class))
                .withPropertyValues("limiter.backend=jdbc"), (description) -> assertThat(description)
                        .contains("limiter.backend").contains("DataSource"));
    }

}
