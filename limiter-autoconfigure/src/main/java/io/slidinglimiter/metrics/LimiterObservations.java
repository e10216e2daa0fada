package io.slidinglimiter.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import io.slidinglimiter.core.DecisionObserver;

/**
 * A {@code limiter.decision} observation around each decision, in the application's
 * {@link ObservationRegistry}: a timer where metrics are on, a span where tracing is.
 */
public final class LimiterObservations implements DecisionObservers {

    private static final DefaultDecisionObservationConvention DEFAULT_CONVENTION =
            new DefaultDecisionObservationConvention();

    private final ObservationRegistry registry;

    private final DecisionObservationConvention convention;

    /**
     * Creates the observations.
     * @param registry the application's registry
     * @param convention the application's convention, or null for the default one
     */
    public LimiterObservations(ObservationRegistry registry, DecisionObservationConvention convention) {
        this.registry = registry;
        this.convention = convention;
    }

    @Override
    public DecisionObserver forBackend(String backend) {
        return new DecisionObserver() {

            @Override
            public Object deciding(String limits) {
                return LimiterObservationDocumentation.DECISION.observation(LimiterObservations.this.convention,
                        DEFAULT_CONVENTION, () -> new DecisionObservationContext(limits, backend),
                        LimiterObservations.this.registry).start();
            }

            @Override
            public void decided(Object started, Boolean allowed, Throwable failure) {
                Observation observation = (Observation) started;
                if (allowed != null && observation.getContext() instanceof DecisionObservationContext context) {
                    context.setAllowed(allowed);
                }
                if (failure != null) {
                    observation.error(failure);
                }
                observation.stop();
            }

        };
    }

}
