/**
 * The API of the limiter, as code calls it: {@link io.slidinglimiter.RateLimiters} decides by a
 * limit's name, and a {@link io.slidinglimiter.Decision} says what it decided.
 * <p>
 * <b>API.</b> Every public type of this package.
 */
@NullMarked
package io.slidinglimiter;

import org.jspecify.annotations.NullMarked;
