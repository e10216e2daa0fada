/**
 * The in-process backend: {@link io.slidinglimiter.local.LocalBackend}, counters in this JVM,
 * bounded in keys and bytes.
 * <p>
 * <b>API.</b> {@code LocalBackend} alone. The counters behind it (the sliding window counter, the
 * sliding log, the overflow sketch) are package-private.
 */
@NullMarked
package io.slidinglimiter.local;

import org.jspecify.annotations.NullMarked;
