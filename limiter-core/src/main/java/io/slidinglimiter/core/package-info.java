/**
 * Limits and what decides them: {@link io.slidinglimiter.core.LimitDefinition} and the
 * {@link io.slidinglimiter.core.LimitRegistry} that holds them, the
 * {@link io.slidinglimiter.core.RateLimitBackend} every backend implements, requests and decisions of
 * several limits at once, the statistics of each limit, and the clocks ({@link io.slidinglimiter.core.TimeSource}).
 * <p>
 * <b>API.</b> Every public type of this package; {@code RateLimitBackend}, {@code DecisionObserver}
 * and {@code TimeSource} are also service provider interfaces an application may implement.
 * {@link io.slidinglimiter.core.ManualTimeSource} is a clock for tests.
 */
@NullMarked
package io.slidinglimiter.core;

import org.jspecify.annotations.NullMarked;
