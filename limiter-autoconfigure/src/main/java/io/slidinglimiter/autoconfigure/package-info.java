/**
 * Spring Boot auto-configuration of the limiter, and its properties
 * ({@link io.slidinglimiter.autoconfigure.LimiterProperties}, {@code limiter.*}).
 * <p>
 * <b>API.</b> {@code LimiterProperties} and the auto-configuration classes by name (to exclude or
 * order against). Their bean methods and nested types are not API.
 */
@NullMarked
package io.slidinglimiter.autoconfigure;

import org.jspecify.annotations.NullMarked;
