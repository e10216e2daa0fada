/**
 * Test support for applications: {@link io.slidinglimiter.test.ResetRateLimits @ResetRateLimits}
 * resets every count before each test method.
 * <p>
 * <b>API.</b> {@code @ResetRateLimits}; its listener is registered by {@code spring.factories}.
 */
@NullMarked
package io.slidinglimiter.test;

import org.jspecify.annotations.NullMarked;
