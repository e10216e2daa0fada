/**
 * SpEL for keys, costs and plans, parsed once per method or rule.
 * <p>
 * <b>Not API.</b> Public only for the auto-configuration; it may change in any release.
 */
@NullMarked
package io.slidinglimiter.expression;

import org.jspecify.annotations.NullMarked;
