/**
 * Meters and observations of decisions.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.metrics.DecisionObservationConvention},
 * {@link io.slidinglimiter.metrics.DefaultDecisionObservationConvention},
 * {@link io.slidinglimiter.metrics.DecisionObservationContext} and
 * {@link io.slidinglimiter.metrics.LimiterObservationDocumentation}: to change the names and tags of
 * the {@code limiter.decision} observation. The rest is not API.
 */
@NullMarked
package io.slidinglimiter.metrics;

import org.jspecify.annotations.NullMarked;
