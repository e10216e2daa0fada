package io.slidinglimiter.metrics;

import io.micrometer.observation.Observation;

/**
 * What a {@code limiter.decision} observation knows.
 * <p>
 * The limits decided, the backend, and once
 * decided whether the call was admitted.
 */
public class DecisionObservationContext extends Observation.Context {

    private final String limits;

    private final String backend;

    private Boolean allowed;

    /**
     * Creates the context of one decision.
     * @param limits the limit's name, or the names of one call's limits joined by commas
     * @param backend {@code local} or {@code redis}
     */
    public DecisionObservationContext(String limits, String backend) {
        this.limits = limits;
        this.backend = backend;
    }

    /** @return the limit's name, or the names of one call's limits joined by commas */
    public String getLimits() {
        return this.limits;
    }

    /** @return {@code local} or {@code redis} */
    public String getBackend() {
        return this.backend;
    }

    /** @return whether the call was admitted; null until decided, or when the backend failed */
    public Boolean getAllowed() {
        return this.allowed;
    }

    /**
     * Records the outcome.
     * @param allowed whether the call was admitted
     */
    public void setAllowed(boolean allowed) {
        this.allowed = allowed;
    }

}
