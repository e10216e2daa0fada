/**
 * Spring Cloud Gateway: {@link io.slidinglimiter.gateway.SlidingWindowRateLimiter}, the
 * gateway's {@code RateLimiter} on the limiter's counters.
 * <p>
 * <b>API.</b> {@code SlidingWindowRateLimiter}.
 */
@NullMarked
package io.slidinglimiter.gateway;

import org.jspecify.annotations.NullMarked;
