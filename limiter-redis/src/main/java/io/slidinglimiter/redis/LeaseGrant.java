package io.slidinglimiter.redis;

import io.slidinglimiter.Decision;

/**
 * Permits of a key taken from Redis at once, as Redis took them.
 *
 * @param decision the decision of the call that took them (its remaining counts them all as used)
 * @param taken the permits counted in all, the call's cost included; 0 when rejected
 * @param decidedAtMillis the Redis time they were taken at, which names their sub-window
 * @param subWindowEndMillis the Redis time their sub-window ends at: a lease ends by then
 * @param counterCreatedAtMillis the counter's creation time, which a give-back names
 */
record LeaseGrant(Decision decision, long taken, long decidedAtMillis, long subWindowEndMillis,
        long counterCreatedAtMillis) {
}
