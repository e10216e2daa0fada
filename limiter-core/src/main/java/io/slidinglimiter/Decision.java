package io.slidinglimiter;

import java.time.Duration;

/**
 * The outcome of one rate-limit decision for one limit, one key.
 * <pre>{@code
 * Decision decision = rateLimiters.tryAcquire("login", username);
 * if (!decision.allowed()) {
 *     return ResponseEntity.status(429).header("Retry-After", ...).build();
 * }
 * }</pre>
 *
 * @param allowed whether the call was admitted (and its cost consumed)
 * @param limit the permits per window that applied
 * @param remaining permits still available in the current window after this decision
 * @param retryAfterMillis for a rejected call, the exact time until enough permits expire for the
 * same cost to fit; zero when allowed
 * @param resetAfterMillis the time until every permit counted now has expired and the full quota is
 * available again; zero when nothing is counted
 */
public record Decision(boolean allowed, long limit, long remaining, long retryAfterMillis, long resetAfterMillis) {

    /**
     * The time a rejected caller should wait before trying the same cost again.
     * @return {@link Duration#ZERO} when allowed
     */
    public Duration retryAfter() {
        return Duration.ofMillis(this.retryAfterMillis);
    }

    /**
     * Whether this rejection has no count behind it: the limit could not be checked (Redis did not
     * answer) and it fails closed. A limit that counted a rejection always holds permits, so its
     * {@code resetAfterMillis} is positive.
     * @return {@code true} for a rejection by the fail-closed policy
     */
    public boolean isUnchecked() {
        return !this.allowed && this.resetAfterMillis == 0 && this.retryAfterMillis > 0;
    }

    /**
     * The time until the whole quota is free again.
     * @return {@link Duration#ZERO} when nothing is counted
     */
    public Duration resetAfter() {
        return Duration.ofMillis(this.resetAfterMillis);
    }

}
