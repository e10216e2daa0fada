package io.slidinglimiter.metrics;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The limiter's observations.
 * <p>
 * {@code limiter.decision}, one per decision of a backend, a timer in
 * metrics and a span where tracing is set up.
 */
public enum LimiterObservationDocumentation implements ObservationDocumentation {

    /** A rate-limit decision: one call's limits, decided together by one backend. */
    DECISION {

        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultDecisionObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeyNames.values();
        }

    };

    /** The keys of a decision, each of bounded cardinality: no key of a counter ever appears. */
    public enum LowCardinalityKeyNames implements KeyName {

        /** The limit decided, or the limits of one call joined by commas. */
        LIMIT {

            @Override
            public String asString() {
                return "limit";
            }

        },

        /** {@code allowed}, {@code rejected}, or {@code error} when the backend failed. */
        OUTCOME {

            @Override
            public String asString() {
                return "outcome";
            }

        },

        /** {@code local} or {@code redis}. */
        BACKEND {

            @Override
            public String asString() {
                return "backend";
            }

        }

    }

}
