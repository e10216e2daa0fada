/**
 * The HTTP side: the servlet and reactive filters of {@code limiter.http} rules, the standard
 * headers, and the 429 answer.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.web.RateLimitRejectionHandler} (a bean that writes the 429),
 * {@link io.slidinglimiter.web.Rejection} (what it is given) and
 * {@link io.slidinglimiter.web.ProblemDetailRejectionHandler} (the default). The rest is public only
 * for the auto-configuration and may change in any release.
 */
@NullMarked
package io.slidinglimiter.web;

import org.jspecify.annotations.NullMarked;
