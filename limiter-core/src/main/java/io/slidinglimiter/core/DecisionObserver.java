package io.slidinglimiter.core;

/**
 * Told of each decision a {@link TimedBackend} takes, around it.
 * <p>
 * For observations that open a span
 * and a timer per decision (Micrometer's, wired by the auto-configuration).
 */
public interface DecisionObserver {

    /**
     * A decision starts.
     * @param limits the limit's name, or the names of one call's limits joined by commas
     * @return what {@link #decided} gets back
     */
    Object deciding(String limits);

    /**
     * The decision ended.
     * @param started what {@link #deciding} returned
     * @param allowed whether the call was admitted; null when the backend failed
     * @param failure what the backend threw, or null
     */
    void decided(Object started, Boolean allowed, Throwable failure);

}
