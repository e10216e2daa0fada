package io.slidinglimiter.core;

import io.slidinglimiter.Decision;

/**
 * What one key holds in one limit now, read without consuming anything.
 *
 * @param used the permits counted in the window; more than the limit when calls were charged
 * beyond their cost
 * @param decision what a call of cost 1 would be told now
 */
public record KeyUsage(long used, Decision decision) {
}
