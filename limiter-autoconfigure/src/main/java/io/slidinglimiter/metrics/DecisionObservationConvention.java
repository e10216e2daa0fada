package io.slidinglimiter.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of {@code limiter.decision} observations: declare a bean of this type to change
 * their name or keys.
 */
public interface DecisionObservationConvention extends ObservationConvention<DecisionObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof DecisionObservationContext;
    }

}
