package io.slidinglimiter.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * On a Spring test class: every rate-limit count is reset ({@code RateLimiters.resetAll()}) before
 * each test method, so that tests which share a cached application context, in one class or
 * several, never see each other's counts. With the Redis backend, every counter under the key
 * prefix is deleted: give each test run a prefix (or a Redis) of its own.
 * <pre>{@code
 * @SpringBootTest
 * @ResetRateLimits
 * class LoginTests { ... }
 * }</pre>
 * Applied by {@link ResetRateLimitsTestExecutionListener}, which Spring's test framework finds by
 * itself; on a nested test class it applies when it is on the class or an enclosing one.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface ResetRateLimits {

}
