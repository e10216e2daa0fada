package io.slidinglimiter.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.actuate.LimitChanges;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.NamedBackend;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.metrics.BackendTimers;
import io.slidinglimiter.metrics.DecisionObservers;

/**
 * Sliding Limiter's core beans.
 * <p>
 * The limits from {@code limiter.limits}, the backend that counts
 * and the {@link RateLimiters} facade. Each may be replaced by a bean of the same type.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LimiterProperties.class)
@ImportRuntimeHints(LimiterRuntimeHints.class)
public class LimiterAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    TimeSource limiterTimeSource() {
        return TimeSource.ticking();
    }

    @Bean
    @ConditionalOnMissingBean
    LimitRegistry limitRegistry(LimiterProperties properties, ResourceLoader resourceLoader) {
        return ConfiguredLimits.registry(properties, RedisSupport.isPresent(resourceLoader.getClassLoader()));
    }

    /**
     * The backend limits count in: the local one and those the application's modules contribute
     * ({@link NamedBackend} beans), each limit routed to the one its properties name.
     */
    @Bean
    @ConditionalOnMissingBean
    RateLimitBackend rateLimitBackend(LimiterProperties properties, TimeSource limiterTimeSource,
            ObjectProvider<NamedBackend> backends, ObjectProvider<BackendTimers> timers,
            ObjectProvider<DecisionObservers> observations, ResourceLoader resourceLoader) {
        return Backends.routed(properties, Backends.local(properties, limiterTimeSource),
                backends.orderedStream().toList(),
                new Backends.Timing(timers, observations, properties.getObservations().isLocal()),
                RedisSupport.isPresent(resourceLoader.getClassLoader()));
    }

    @Bean
    @ConditionalOnMissingBean
    LimitChanges limitChanges(LimitRegistry limitRegistry, RateLimitBackend rateLimitBackend) {
        return new LimitChanges(limitRegistry, rateLimitBackend::largestLimit);
    }

    /** Live changes of limiter.limits, where Spring Cloud publishes EnvironmentChangeEvent. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
    static class LiveChangesConfiguration {

        @Bean
        LiveLimitChanges liveLimitChanges(Environment environment, LimitRegistry limitRegistry,
                LimitChanges limitChanges, ResourceLoader resourceLoader) {
            return new LiveLimitChanges(environment, limitRegistry, limitChanges,
                    RedisSupport.isPresent(resourceLoader.getClassLoader()));
        }

    }

    @Bean
    HttpRulesCheck limiterHttpRulesCheck(LimiterProperties properties, ApplicationContext applicationContext) {
        return new HttpRulesCheck(properties, applicationContext);
    }

    /**
     * Fails the start when {@code limiter.http.rules} are set but the application is not a web
     * application, where no filter would apply them.
     */
    static final class HttpRulesCheck implements SmartInitializingSingleton {

        private final LimiterProperties properties;

        private final ApplicationContext applicationContext;

        HttpRulesCheck(LimiterProperties properties, ApplicationContext applicationContext) {
            this.properties = properties;
            this.applicationContext = applicationContext;
        }

        @Override
        public void afterSingletonsInstantiated() {
            if (WebStack.of(this.applicationContext) != WebStack.NONE || this.properties.getHttp().getRules().isEmpty()) {
                return;
            }
            throw new InvalidLimiterConfigurationException("limiter.http.rules", "are set, but this application is"
                    + " not a web application, so no URL rule would ever apply",
                    "Remove limiter.http.rules, or make the application a web application"
                            + " (spring-boot-starter-webmvc or spring-boot-starter-webflux).");
        }

    }

    @Bean
    @ConditionalOnMissingBean
    RateLimiters rateLimiters(LimitRegistry limitRegistry, RateLimitBackend rateLimitBackend) {
        return new RateLimiters(limitRegistry, rateLimitBackend);
    }

    @Bean
    ChargeSettlement limiterChargeSettlement(ObjectProvider<RateLimiters> rateLimiters,
            ObjectProvider<LimitRegistry> limitRegistry) {
        return new ChargeSettlement(rateLimiters::getObject, limitRegistry::getObject);
    }

}
