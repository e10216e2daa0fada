package io.slidinglimiter.autoconfigure;

import java.util.Map;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

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
@Conditional(LimiterObservationAutoConfiguration.DecisionObservationsEnabled.class)
public class LimiterObservationAutoConfiguration {

    /** The name Boot's switch is matched against, longest prefix first. */
    static final String OBSERVATION_NAME = "limiter.decision";

    @Bean
    @ConditionalOnMissingBean
    LimiterObservations limiterObservations(ObservationRegistry observationRegistry,
            ObjectProvider<DecisionObservationConvention> decisionObservationConvention) {
        return new LimiterObservations(observationRegistry, decisionObservationConvention.getIfAvailable());
    }

    /**
     * Whether Boot's {@code management.observations.enable.*} leaves {@code limiter.decision} on, read
     * as Boot reads it: the longest matching prefix wins, then {@code all}, then on. Boot's own
     * predicate would drop a switched-off observation too, but only after every decision had made
     * its context and tested it (264 B and about 0.2 µs each, BENCHMARKS.md "With Actuator"); without
     * this bean no decision is observed at all. Read at start-up, as Boot reads its other switches.
     */
    static final class DecisionObservationsEnabled extends SpringBootCondition {

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Map<String, Boolean> enable = Binder.get(context.getEnvironment())
                .bind("management.observations.enable", Bindable.mapOf(String.class, Boolean.class))
                .orElse(Map.of());
            ConditionMessage.Builder message = ConditionMessage.forCondition("management.observations.enable");
            for (String name = OBSERVATION_NAME; name != null; name = parent(name)) {
                Boolean enabled = enable.get(name);
                if (enabled != null) {
                    return new ConditionOutcome(enabled, message.because("'" + name + "' is " + enabled));
                }
            }
            boolean all = enable.getOrDefault("all", true);
            return new ConditionOutcome(all, message.because("'all' is " + all));
        }

        private static String parent(String name) {
            int dot = name.lastIndexOf('.');
            return (dot > 0) ? name.substring(0, dot) : null;
        }

    }

}
