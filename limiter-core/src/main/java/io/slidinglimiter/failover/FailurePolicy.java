package io.slidinglimiter.failover;

/**
 * What a decision does when the server fails or does not answer in time.
 */
public enum FailurePolicy {

    /** Admit the call: the service stays up, unlimited, while the server is down. */
    FAIL_OPEN,

    /** Reject the call, with a retry-after of the circuit breaker's pause. */
    FAIL_CLOSED,

    /** Decide with an in-process counter of the same limit: each instance limits on its own. */
    LOCAL;

    /** @return the policy as written in configuration: {@code fail-open}, {@code fail-closed}, {@code local} */
    public String id() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

}
