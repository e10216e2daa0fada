package io.slidinglimiter.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.actuate.RateLimiterHealthIndicator;
import io.slidinglimiter.actuate.RateLimitersEndpoint;
import io.slidinglimiter.actuate.RemoteBackendStatus;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;

/**
 * The limiter's Actuator parts: the {@code ratelimiters} endpoint, the {@code ratelimiter} health
 * contributor.
 * <p>
 * The {@code ratelimiters} Actuator endpoint, exposed like any endpoint, and the
 * {@code ratelimiter} health contributor when a limit uses a remote backend (Redis, the database).
 */
@AutoConfiguration(after = { LimiterAutoConfiguration.class, LimiterRedisAutoConfiguration.class,
        LimiterJdbcAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimiters.class)
public class LimiterActuatorAutoConfiguration {

    /** Outer class: only a class condition, so the inner one's conditions load only with Actuator there. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint" })
    static class EndpointConfiguration {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnAvailableEndpoint(RateLimitersEndpoint.class)
        static class AvailableEndpointConfiguration {

            @Bean
            @ConditionalOnMissingBean
            RateLimitersEndpoint rateLimitersEndpoint(LimitRegistry limitRegistry, RateLimiters rateLimiters,
                    LimitChanges limitChanges, LimiterProperties properties, ObjectProvider<RemoteBackendStatus> remotes) {
                return new RateLimitersEndpoint(limitRegistry, rateLimiters, limitChanges, (definition) ->
                        ConfiguredLimits.backendOf(properties, definition.name()), remotes.orderedStream().toList());
            }

        }

    }

    /** Outer class: only class conditions, so the health conditions load only with Spring Boot's health support. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { "org.springframework.boot.health.contributor.AbstractHealthIndicator",
            "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator" })
    static class HealthConfiguration {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnBean(RemoteBackendStatus.class)
        @ConditionalOnEnabledHealthIndicator("ratelimiter")
        static class RemoteHealthConfiguration {

            /**
             * One contributor for every remote backend (Redis, the database), each limit with its own
             * policy: every limit of the registry at each check, annotations' included.
             */
            @Bean
            @ConditionalOnMissingBean(name = "ratelimiterHealthIndicator")
            RateLimiterHealthIndicator ratelimiterHealthIndicator(ObjectProvider<RemoteBackendStatus> remotes,
                    LimiterProperties properties, LimitRegistry limitRegistry) {
                return new RateLimiterHealthIndicator(remotes.orderedStream().toList(), (remote) -> {
                    Map<String, String> own = new TreeMap<>();
                    for (LimitDefinition limit : limitRegistry.all()) {
                        if (remote.backend().equals(ConfiguredLimits.backendOf(properties, limit.name()))) {
                            own.put(limit.name(), remote.status().policyOf(limit.name()).id());
                        }
                    }
                    return own;
                });
            }

        }

    }

}
