/**
 * Actuator: the {@code ratelimiters} endpoint and the {@code ratelimiter} health.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.actuate.RateLimitersEndpoint} and
 * {@link io.slidinglimiter.actuate.RateLimiterHealthIndicator}, by their operations and details;
 * {@code LimitChanges} is not API.
 */
@NullMarked
package io.slidinglimiter.actuate;

import org.jspecify.annotations.NullMarked;
