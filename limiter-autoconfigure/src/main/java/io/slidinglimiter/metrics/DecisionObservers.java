package io.slidinglimiter.metrics;

import io.slidinglimiter.core.DecisionObserver;

/**
 * Where decisions are observed, one observer per backend, resolved once; free of Micrometer's
 * types, so that the auto-configuration can ask for it whether Micrometer is there or not.
 */
@FunctionalInterface
public interface DecisionObservers {

    /**
     * The observer of one backend's decisions.
     * @param backend {@code local} or {@code redis}
     * @return the observer
     */
    DecisionObserver forBackend(String backend);

}
