package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.Map;

import io.lettuce.core.cluster.SlotHash;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.actuate.RemoteBackendStatus;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.NamedBackend;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.RedisLimitOverrides;
import io.slidinglimiter.redis.RedisStatus;
import io.slidinglimiter.redis.ResilientRedisBackend;

/**
 * The Redis backend, when a limit asks for it.
 * <p>
 * The Redis backend, when a limit asks for it ({@code limiter.backend=redis} or
 * {@code limiter.limits.<name>.backend=redis}) and Spring Data Redis with Lettuce is there: limits
 * go to Redis or stay local as configured, through the application's own
 * {@link RedisConnectionFactory}.
 */
@AutoConfiguration(before = LimiterAutoConfiguration.class,
        afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(name = { RedisSupport.CONNECTION_FACTORY, RedisSupport.LETTUCE })
@Conditional(UsesRedisCondition.class)
@EnableConfigurationProperties(LimiterProperties.class)
public class LimiterRedisAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LettuceScriptRunner limiterRedisScriptRunner(LimiterProperties properties,
            ObjectProvider<RedisConnectionFactory> connectionFactory) {
        RedisConnectionFactory factory = connectionFactory.getIfAvailable();
        if (factory == null) {
            throw new InvalidLimiterConfigurationException(ConfiguredLimits.propertyNaming(properties, Backends.REDIS),
                    "is redis, but the application has no RedisConnectionFactory",
                    "Add org.springframework.boot:spring-boot-starter-data-redis and set spring.data.redis.host and"
                            + " spring.data.redis.port (or spring.data.redis.url).");
        }
        LimiterProperties.Redis redis = properties.getRedis();
        // Without max-wait, the runner's default: 2 s, or the timeout when that is longer.
        LettuceScriptRunner runner = (redis.getMaxWait() != null)
                ? new LettuceScriptRunner(factory, redis.getTimeout(), redis.getMaxWait())
                : new LettuceScriptRunner(factory, redis.getTimeout());
        runner.setBatching(redis.isBatching());
        return runner;
    }

    /**
     * Opens the Redis connection once every bean exists, before the first decision needs it. The
     * application starts without Redis rather than not at all: that is said once, and the failure
     * policy decides meanwhile.
     */
    @Bean
    RedisConnectionWarmup limiterRedisConnection(LettuceScriptRunner limiterRedisScriptRunner,
            LimiterProperties properties, ObjectProvider<RedisConnectionFactory> connectionFactory) {
        return new RedisConnectionWarmup(limiterRedisScriptRunner, properties.getRedis().getOnFailure(),
                RedisAddress.of(connectionFactory.getIfAvailable()));
    }

    /** What the Redis backend tells of itself, for the endpoint (which loads without Redis). */
    @Bean
    RedisStatus limiterRedisStatus(LimiterRedis limiterRedis) {
        return limiterRedis.backend().status();
    }

    /** The Redis backend as health and the endpoint see every remote backend: a read asks for the script. */
    @Bean
    RemoteBackendStatus limiterRedisRemoteStatus(LimiterRedis limiterRedis) {
        return RemoteBackendStatus.redis(limiterRedis.backend().status());
    }

    @Bean
    LimiterRedis limiterRedis(LimiterProperties properties, ObjectProvider<TimeSource> timeSource,
            LettuceScriptRunner limiterRedisScriptRunner, RedisConnectionFactory connectionFactory,
            LimitRegistry limitRegistry) {
        TimeSource clock = timeSource.getIfAvailable(TimeSource::monotonic);
        LimiterProperties.Redis redisProperties = properties.getRedis();
        boolean cluster = connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
        RedisBackend redis = new RedisBackend(limiterRedisScriptRunner, new RedisKeys(properties.getKeyPrefix()),
                cluster ? SlotHash::getSlot : null);
        Map<String, FailurePolicy> policies = ConfiguredLimits.failurePolicies(properties);
        ResilientRedisBackend resilient = new ResilientRedisBackend(redis,
                Backends.local(properties, clock),
                new ResilientRedisBackend.Settings(redisProperties.getOnFailure(), policies,
                        redisProperties.getFailureThreshold(), redisProperties.getOpenFor().toMillis(),
                        redisProperties.getDenialCacheSize(),
                        ConfiguredLimits.leased(properties, Backends.REDIS, redisProperties.isLease())),
                clock, (limit) -> limitRegistry.statistics(limit.name()).recordFallback(), cluster ? null : () -> {
                    // One server: a read that answers proves it back. (A Cluster's shards recover one by one,
                    // each through its own breaker's trial call.)
                    limiterRedisScriptRunner.reconnectIfClosed();
                    limiterRedisScriptRunner.isScriptLoaded();
                    return true;
                });
        return new LimiterRedis(limiterRedisScriptRunner, resilient, redisProperties.getOnFailure(),
                policies.containsValue(FailurePolicy.FAIL_CLOSED));
    }

    /** The Redis backend, for the limits that name it ({@code redis}). */
    @Bean
    NamedBackend limiterRedisBackend(LimiterRedis limiterRedis) {
        return new NamedBackend(Backends.REDIS, limiterRedis.backend());
    }

    /**
     * Under Sentinel ({@code spring.data.redis.sentinel.*}), follows a promotion as soon as a sentinel
     * announces it; nothing otherwise.
     */
    @Bean
    SentinelPromotions limiterSentinelPromotions(RedisConnectionFactory connectionFactory, LimiterRedis limiterRedis) {
        return new SentinelPromotions(connectionFactory, limiterRedis);
    }

    /**
     * On Redis Cluster, Lettuce refreshes its view of which node serves which slots neither
     * periodically nor on failures unless told to (Spring Boot's defaults): the limiter would never
     * follow a promoted replica. Unless the application set
     * {@code spring.data.redis.lettuce.cluster.refresh.*} itself, refresh every second and on every
     * adaptive trigger (MOVED, ASK, reconnection attempts, unknown nodes). Applied first, so that an
     * application's own customizer still has the last word.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer")
    static class ClusterTopologyRefreshConfiguration {

        static final String REFRESH = "spring.data.redis.lettuce.cluster.refresh";

        static final Duration REFRESH_PERIOD = Duration.ofSeconds(1);

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        LettuceClientOptionsBuilderCustomizer limiterClusterTopologyRefresh(Environment environment) {
            boolean configured = Binder.get(environment).bind(REFRESH, Bindable.mapOf(String.class, Object.class))
                    .isBound();
            boolean dynamicSources = environment.getProperty(REFRESH + ".dynamic-refresh-sources", Boolean.class, true);
            return (builder) -> {
                if (!configured && builder instanceof ClusterClientOptions.Builder cluster) {
                    cluster.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(REFRESH_PERIOD)
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(REFRESH_PERIOD)
                            .dynamicRefreshSources(dynamicSources)
                            .build());
                }
            };
        }

    }

    /**
     * {@code limiter.lease.decisions} (tags {@code limit}, {@code source} = {@code lease} or
     * {@code redis}): the decisions of each leasing limit admitted from a lease, and taken by Redis.
     * {@code limiter.redis.batches} and {@code limiter.redis.batched.decisions}: the script calls that
     * carried more than one decision, and the decisions they carried.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class RedisMetricsConfiguration {

        @Bean
        MeterBinder limiterRedisBatchMeters(LettuceScriptRunner limiterRedisScriptRunner) {
            return (registry) -> {
                FunctionCounter.builder("limiter.redis.batches", limiterRedisScriptRunner,
                        LettuceScriptRunner::batchesSent)
                        .description("Script calls that carried more than one decision to Redis").register(registry);
                FunctionCounter.builder("limiter.redis.batched.decisions", limiterRedisScriptRunner,
                        LettuceScriptRunner::batchedDecisions)
                        .description("Decisions carried to Redis by batches").register(registry);
            };
        }

        @Bean
        SmartInitializingSingleton limiterLeaseMeters(ObjectProvider<MeterRegistry> meterRegistry,
                LimiterRedis limiterRedis, LimitRegistry limitRegistry) {
            return LeaseMeters.binder(meterRegistry, limitRegistry, limiterRedis.backend().status(), Backends.REDIS);
        }

    }

    /**
     * What leases hold is given back when the application stops: after the web server stopped taking
     * requests, before the Redis connection factory closes its connections (phase 0).
     */
    @Bean
    LeaseGiveBack limiterLeaseGiveBack(LimiterRedis limiterRedis) {
        return new LeaseGiveBack(limiterRedis.backend());
    }

    /** Limits changed at run time reach every instance through Redis, read every second. */
    @Bean
    @ConditionalOnMissingBean
    LimitChanges limitChanges(LimitRegistry limitRegistry, LettuceScriptRunner limiterRedisScriptRunner,
            LimiterProperties properties, RateLimitBackend rateLimitBackend) {
        return new LimitChanges(limitRegistry,
                new RedisLimitOverrides(limiterRedisScriptRunner, properties.getKeyPrefix()), 1_000,
                rateLimitBackend::largestLimit, limiterRedisScriptRunner::isConnected);
    }

    /**
     * The Redis side of the limiter, for health and operations.
     *
     * @param runner talks to Redis
     * @param backend the Redis backend with its failure handling
     * @param defaultPolicy limiter.redis.on-failure
     * @param someLimitFailsClosed whether a limit overrides it with fail-closed
     */
    public record LimiterRedis(LettuceScriptRunner runner, ResilientRedisBackend backend, FailurePolicy defaultPolicy,
            boolean someLimitFailsClosed) {

        /** @return whether an outage makes some limit reject calls */
        public boolean anyFailsClosed() {
            return this.someLimitFailsClosed || this.defaultPolicy == FailurePolicy.FAIL_CLOSED;
        }

    }

}
