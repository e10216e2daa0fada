package io.slidinglimiter.core;

import java.util.Objects;

import io.slidinglimiter.InvalidCostException;

/**
 * One part of an all-or-nothing decision: {@code cost} permits of {@code limit} for {@code key}.
 *
 * @param limit the limit's definition
 * @param key the counter key, not blank
 * @param cost the permits to take, between 1 and the limit
 */
public record LimitRequest(LimitDefinition limit, String key, long cost) {

    /**
     * Checks the key and the cost against the limit.
     * @param limit the limit's definition
     * @param key the counter key
     * @param cost the permits to take
     * @throws IllegalArgumentException for a blank key or a cost outside 1..limit
     */
    public LimitRequest {
        check(limit, key, cost);
    }

    /**
     * Checks the parts of a request without creating one.
     * @param limit the limit's definition
     * @param key the counter key
     * @param cost the permits to take
     * @throws IllegalArgumentException naming the bad value: an {@link InvalidCostException} for a
     * cost outside 1..limit
     */
    public static void check(LimitDefinition limit, String key, long cost) {
        Objects.requireNonNull(limit, "limit must not be null");
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("Limit '" + limit.name() + "': the key must not be "
                    + ((key == null) ? "null" : "empty or blank"));
        }
        checkCost(limit, cost);
    }

    /**
     * Checks a cost against its limit.
     * @param limit the limit's definition, not null
     * @param cost the permits to take
     * @throws InvalidCostException for a cost outside 1..limit
     */
    public static void checkCost(LimitDefinition limit, long cost) {
        Objects.requireNonNull(limit, "limit must not be null");
        if (cost < 1 || cost > limit.limit()) {
            throw new InvalidCostException("The cost of limit '" + limit.name() + "' was " + cost
                    + "; it must be between 1 and " + limit.limit());
        }
    }

}
