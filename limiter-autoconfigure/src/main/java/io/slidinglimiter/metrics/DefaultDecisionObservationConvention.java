package io.slidinglimiter.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.micrometer.common.KeyValues;

import io.slidinglimiter.metrics.LimiterObservationDocumentation.LowCardinalityKeyNames;

/**
 * {@code limiter.decision}, with the low-cardinality keys {@code limit}, {@code outcome}, {@code backend}.
 * <p>
 * The keys and the contextual name of a limit are worked out once per backend and outcome, not at
 * every decision: Micrometer asks for them at the start and at the stop of each observation, and
 * building and sorting them again took about a tenth of an observation (BENCHMARKS.md).
 */
public class DefaultDecisionObservationConvention implements DecisionObservationConvention {

    /** The observation's name. */
    public static final String NAME = "limiter.decision";

    /**
     * At most this many limits (or sets of limits decided together) keep their keys; any more are
     * built at each decision. Limit names come from the configuration and the annotations, so this is
     * a guard, not a size an application reaches.
     */
    static final int MAX_CACHED_LIMITS = 1_024;

    private final ConcurrentMap<String, Labels> labels = new ConcurrentHashMap<>();

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(DecisionObservationContext context) {
        return labelsOf(context).contextualName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(DecisionObservationContext context) {
        Labels labels = labelsOf(context);
        Boolean allowed = context.getAllowed();
        if (allowed == null) {
            return labels.error();
        }
        return allowed ? labels.allowed() : labels.rejected();
    }

    private Labels labelsOf(DecisionObservationContext context) {
        Labels labels = this.labels.get(context.getLimits());
        if (labels != null && labels.backend().equals(context.getBackend())) {
            return labels;
        }
        labels = Labels.of(context.getLimits(), context.getBackend());
        // A limit that moved to another backend replaces its entry.
        if (this.labels.size() < MAX_CACHED_LIMITS || this.labels.containsKey(context.getLimits())) {
            this.labels.put(context.getLimits(), labels);
        }
        return labels;
    }

    /** What every observation of one limit on one backend carries, by outcome. */
    private record Labels(String backend, String contextualName, KeyValues allowed, KeyValues rejected,
            KeyValues error) {

        static Labels of(String limits, String backend) {
            return new Labels(backend, "limiter " + limits, keyValues(limits, "allowed", backend),
                    keyValues(limits, "rejected", backend), keyValues(limits, "error", backend));
        }

        private static KeyValues keyValues(String limits, String outcome, String backend) {
            return KeyValues.of(LowCardinalityKeyNames.LIMIT.withValue(limits),
                    LowCardinalityKeyNames.OUTCOME.withValue(outcome), LowCardinalityKeyNames.BACKEND.withValue(backend));
        }

    }

}
