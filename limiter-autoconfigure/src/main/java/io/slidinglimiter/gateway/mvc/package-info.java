/**
 * Spring Cloud Gateway Server MVC: {@link io.slidinglimiter.gateway.mvc.LimiterFilterFunctions},
 * the {@code RateLimit} filter of routes, in Java and in properties.
 * <p>
 * <b>API.</b> {@code LimiterFilterFunctions}.
 */
@NullMarked
package io.slidinglimiter.gateway.mvc;

import org.jspecify.annotations.NullMarked;
