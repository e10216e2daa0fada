package io.slidinglimiter.metrics;

import java.util.function.LongConsumer;

/**
 * Where the durations of backend calls go, one timer per backend, resolved once.
 */
@FunctionalInterface
public interface BackendTimers {

    /**
     * The timer of one backend.
     * @param backend {@code local} or {@code redis}
     * @return receives the nanoseconds of each call; null when the timer is switched off, so that no
     * call is timed
     */
    LongConsumer forBackend(String backend);

}
