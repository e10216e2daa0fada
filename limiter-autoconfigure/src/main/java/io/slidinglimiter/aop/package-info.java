/**
 * The {@code @RateLimited} advice on Spring beans: the pointcut, the interceptor, and the
 * start-time validation of every annotated method.
 * <p>
 * <b>Not API.</b> Public only for the auto-configuration; it may change in any release.
 */
@NullMarked
package io.slidinglimiter.aop;

import org.jspecify.annotations.NullMarked;
