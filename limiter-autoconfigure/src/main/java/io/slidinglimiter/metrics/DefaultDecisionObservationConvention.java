package io.slidinglimiter.metrics;

import io.micrometer.common.KeyValues;

import io.slidinglimiter.metrics.LimiterObservationDocumentation.LowCardinalityKeyNames;

/**
 * {@code limiter.decision}, with the low-cardinality keys {@code limit}, {@code outcome} and
 * {@code backend}.
 */
public class DefaultDecisionObservationConvention implements DecisionObservationConvention {

    /** The observation's name. */
    public static final String NAME = "limiter.decision";

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(DecisionObservationContext context) {
        return "limiter " + context.getLimits();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(DecisionObservationContext context) {
        String outcome = (context.getAllowed() == null) ? "error" : (context.getAllowed() ? "allowed" : "rejected");
        return KeyValues.of(LowCardinalityKeyNames.LIMIT.withValue(context.getLimits()),
                LowCardinalityKeyNames.OUTCOME.withValue(outcome),
                LowCardinalityKeyNames.BACKEND.withValue(context.getBackend()));
    }

}
