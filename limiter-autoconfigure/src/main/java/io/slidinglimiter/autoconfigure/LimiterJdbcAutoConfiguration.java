package io.slidinglimiter.autoconfigure;

import java.util.Map;
import java.util.function.Predicate;

import javax.sql.DataSource;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.actuate.RemoteBackendStatus;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.NamedBackend;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.Leases;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.jdbc.CounterTable;
import io.slidinglimiter.jdbc.JdbcBackend;
import io.slidinglimiter.jdbc.JdbcLimitOverrides;

/**
 * The database backend, when a limit asks for it.
 * <p>
 * When a limit asks for it ({@code limiter.backend=jdbc} or {@code limiter.limits.<name>.backend=jdbc})
 * and the application has a {@link DataSource}: those limits count in a PostgreSQL table of that
 * database, behind the core's failover ({@code limiter.jdbc.*}). At start the database must be
 * PostgreSQL 15 or later and hold the table, or the start fails saying how to create it
 * ({@link JdbcSchemaSetup}); run-time limit changes are shared through it unless Redis shares them.
 */
@AutoConfiguration(before = LimiterAutoConfiguration.class, after = LimiterRedisAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(name = { "javax.sql.DataSource", "io.slidinglimiter.jdbc.JdbcBackend" })
@Conditional(UsesJdbcCondition.class)
@EnableConfigurationProperties(LimiterProperties.class)
public class LimiterJdbcAutoConfiguration {

    @Bean
    LimiterJdbc limiterJdbc(LimiterProperties properties, ObjectProvider<DataSource> dataSource,
            ObjectProvider<TimeSource> timeSource, LimitRegistry limitRegistry) {
        DataSource database = dataSource.getIfUnique();
        LimiterProperties.Jdbc jdbcProperties = properties.getJdbc();
        if (database == null) {
            throw new InvalidLimiterConfigurationException(ConfiguredLimits.propertyNaming(properties, Backends.JDBC),
                    "is jdbc, but the application has no DataSource (or several, none of them primary)",
                    "Add org.springframework.boot:spring-boot-starter-jdbc with the PostgreSQL driver and set"
                            + " spring.datasource.url, or mark one DataSource @Primary.");
        }
        CounterTable table;
        try {
            table = new CounterTable(jdbcProperties.getTable());
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidLimiterConfigurationException("limiter.jdbc.table", ex.getMessage(),
                    "Set limiter.jdbc.table to a name such as limiter_counters, or myschema.limiter_counters.");
        }
        JdbcSchemaSetup.prepare(database, table, jdbcProperties.getInitializeSchema(), properties);
        TimeSource clock = timeSource.getIfAvailable(TimeSource::monotonic);
        // Without max-wait, the backend's default: 2 s, or the timeout when that is longer.
        JdbcBackend jdbc = new JdbcBackend(database, table, jdbcProperties.getTimeout(),
                (jdbcProperties.getMaxWait() != null) ? jdbcProperties.getMaxWait() : JdbcBackend.DEFAULT_MAX_WAIT);
        jdbc.setBatching(jdbcProperties.isBatching());
        try {
            jdbc.warmUp();
        }
        catch (RuntimeException ex) {
            // Unreachable at start, which JdbcSchemaSetup said: the failure policy decides until it answers.
        }
        Map<String, FailurePolicy> policies = ConfiguredLimits.failurePolicies(properties);
        ResilientBackend.Settings settings = new ResilientBackend.Settings(jdbcProperties.getOnFailure(), policies,
                jdbcProperties.getFailureThreshold(), jdbcProperties.getOpenFor().toMillis(),
                jdbcProperties.getDenialCacheSize());
        Predicate<String> leased = ConfiguredLimits.leased(properties, Backends.JDBC, jdbcProperties.isLease());
        ResilientBackend backend = new ResilientBackend(jdbc, Backends.local(properties, clock), settings, clock,
                (limit) -> limitRegistry.statistics(limit.name()).recordFallback(), jdbc::ping,
                (leased != null) ? new Leases(jdbc, clock, leased, settings.maxKeys(), true) : null);
        return new LimiterJdbc(jdbc, backend, table);
    }

    /** The database backend, for the limits that name it ({@code jdbc}). */
    @Bean
    NamedBackend limiterJdbcBackend(LimiterJdbc limiterJdbc) {
        return new NamedBackend(Backends.JDBC, limiterJdbc.backend());
    }

    /** What the database backend tells of itself, for health and the endpoint. */
    @Bean
    RemoteBackendStatus limiterJdbcStatus(LimiterJdbc limiterJdbc) {
        return new RemoteBackendStatus(Backends.JDBC, limiterJdbc.backend().failoverStatus(), () -> {
            limiterJdbc.jdbc().ping();
            return Map.of("table", limiterJdbc.table().name());
        });
    }

    /**
     * What leases hold is given back when the application stops: after the web server stopped taking
     * requests, before the pool closes.
     */
    @Bean
    LeaseGiveBack limiterJdbcLeaseGiveBack(LimiterJdbc limiterJdbc) {
        return new LeaseGiveBack(limiterJdbc.backend());
    }

    /** Deletes rows of keys idle past their window, every {@code limiter.jdbc.cleanup-interval}. */
    @Bean
    JdbcIdleSweep limiterJdbcIdleSweep(LimiterJdbc limiterJdbc, LimiterProperties properties) {
        return new JdbcIdleSweep(limiterJdbc.jdbc(), properties.getJdbc().getCleanupInterval());
    }

    /** Limits changed at run time reach every instance through the database, read every second. */
    @Bean
    @ConditionalOnMissingBean
    LimitChanges limitChanges(LimitRegistry limitRegistry, LimiterJdbc limiterJdbc, RateLimitBackend rateLimitBackend) {
        return new LimitChanges(limitRegistry, new JdbcLimitOverrides(limiterJdbc.jdbc()), 1_000,
                rateLimitBackend::largestLimit,
                () -> !limiterJdbc.backend().failoverStatus().isFailing());
    }

    /**
     * {@code limiter.lease.decisions} of the database's leasing limits (source {@code lease} or
     * {@code jdbc}). {@code limiter.jdbc.batches} and {@code limiter.jdbc.batched.decisions}: the
     * statements that carried more than one decision, and the decisions they carried.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class JdbcMetricsConfiguration {

        @Bean
        MeterBinder limiterJdbcBatchMeters(LimiterJdbc limiterJdbc) {
            JdbcBackend jdbc = limiterJdbc.jdbc();
            return (registry) -> {
                FunctionCounter.builder("limiter.jdbc.batches", jdbc, (backend) -> backend.batchCounts()[0])
                        .description("Statements that carried more than one decision to the database")
                        .register(registry);
                FunctionCounter.builder("limiter.jdbc.batched.decisions", jdbc, (backend) -> backend.batchCounts()[1])
                        .description("Decisions carried to the database by batches").register(registry);
            };
        }

        @Bean
        SmartInitializingSingleton limiterJdbcLeaseMeters(ObjectProvider<MeterRegistry> meterRegistry,
                LimiterJdbc limiterJdbc, LimitRegistry limitRegistry) {
            return LeaseMeters.binder(meterRegistry, limitRegistry, limiterJdbc.backend().failoverStatus(),
                    Backends.JDBC);
        }

    }

    /**
     * The database side of the limiter, for health and operations.
     *
     * @param jdbc decides in the database, throwing when it fails
     * @param backend the same with the core's failover: what limits decide through
     * @param table the counters' table
     */
    public record LimiterJdbc(JdbcBackend jdbc, ResilientBackend backend, CounterTable table) {
    }

}
