/**
 * {@link io.slidinglimiter.annotation.RateLimited @RateLimited}: one annotation on a method or a
 * controller, read by the Spring Boot starter.
 * <p>
 * <b>API.</b> Every public type of this package.
 */
@NullMarked
package io.slidinglimiter.annotation;

import org.jspecify.annotations.NullMarked;
