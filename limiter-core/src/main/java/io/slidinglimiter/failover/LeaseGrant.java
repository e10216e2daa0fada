package io.slidinglimiter.failover;

import io.slidinglimiter.Decision;

/**
 * Permits of a key taken from the server at once, as the server took them.
 *
 * @param decision the decision of the call that took them (its remaining counts them all as used)
 * @param taken the permits counted in all, the call's cost included; 0 when rejected
 * @param decidedAtMillis the server time they were taken at, which names their sub-window
 * @param subWindowEndMillis the server time their sub-window ends at: a lease ends by then
 * @param counterCreatedAtMillis the counter's creation time, which a give-back names
 */
public record LeaseGrant(Decision decision, long taken, long decidedAtMillis, long subWindowEndMillis,
        long counterCreatedAtMillis) {
}
