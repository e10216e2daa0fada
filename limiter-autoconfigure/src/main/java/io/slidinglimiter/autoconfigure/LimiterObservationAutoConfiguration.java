package io.slidinglimiter.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.metrics.DecisionObservationConvention;
import io.slidinglimiter.metrics.LimiterObservations;

/**
 * A {@code limiter.decision} observation per decision, when the application has an
 * {@link ObservationRegistry} (Spring Boot's, with Actuator): ordered after Boot's own
 * observation auto-configuration, which creates the registry. Switch it off with
 * {@code management.observations.enable.limiter=false}.
 */
@AutoConfiguration(after = LimiterAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
public class LimiterObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LimiterObservations limiterObservations(ObservationRegistry observationRegistry,
            ObjectProvider<DecisionObservationConvention> decisionObservationConvention) {
        return new LimiterObservations(observationRegistry, decisionObservationConvention.getIfAvailable());
    }

}
