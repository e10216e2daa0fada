/**
 * The kernel of a limited call that every transport shares.
 * <p>
 * The request it serves ({@link io.slidinglimiter.call.InboundCall}), the requests of the rules it
 * matches, decisions for reactive callers, the limits applied for the answer's {@code RateLimit}
 * headers, the settling of a charged call once it ended. It names no transport: each transport maps
 * its own request to an {@code InboundCall}, the outcome to its own answer.
 * <p>
 * <b>Not API.</b> Public only for the transports and the auto-configuration; it may change in any
 * release.
 */
@NullMarked
package io.slidinglimiter.call;

import org.jspecify.annotations.NullMarked;
