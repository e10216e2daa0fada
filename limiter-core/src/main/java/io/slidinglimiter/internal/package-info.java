/**
 * Helpers the core's packages share: key encoding and the splitting of a call across Redis Cluster
 * slots.
 * <p>
 * <b>Not API.</b> Public only because Java has no other way to share a type between packages; it
 * may change in any release.
 */
@NullMarked
package io.slidinglimiter.internal;

import org.jspecify.annotations.NullMarked;
