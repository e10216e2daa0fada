/**
 * Configuration errors and the names of the limit properties they point at.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.config.InvalidLimiterConfigurationException}, which a failed
 * start carries. {@code LimitPropertyNames} is not API.
 */
@NullMarked
package io.slidinglimiter.config;

import org.jspecify.annotations.NullMarked;
