package io.slidinglimiter.core;

/**
 * How a limit counts the permits of its window.
 */
public enum Algorithm {

    /**
     * A ring of sub-window counters with a rolling total: O(sub-windows) memory per key; the
     * effective window is between {@code W - W/N} and {@code W} long.
     */
    SLIDING_WINDOW_COUNTER("sliding-window-counter"),

    /**
     * Exact: the admission time of every permit in the window is kept. O(limit) memory per key.
     */
    SLIDING_LOG("sliding-log");

    private final String id;

    Algorithm(String id) {
        this.id = id;
    }

    /**
     * The name used in configuration, for example {@code sliding-window-counter}.
     * @return the configuration name
     */
    public String id() {
        return this.id;
    }

}
