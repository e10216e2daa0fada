package io.slidinglimiter.failover;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.RateLimitBackend;

/**
 * The service provider interface a backend that decides on a server implements, so that
 * {@link ResilientBackend} can keep its failures from its callers.
 * <p>
 * Its decisions throw when the server fails or does not answer within the backend's own timeout,
 * and {@link ResilientBackend} turns each such failure into the limit's {@link FailurePolicy}. A
 * failure may tell more by what it implements: {@link LateFailure} (the call may still be answered),
 * {@link ShardFailure} (one shard of several failed). The methods here tell the rest.
 */
public interface RemoteBackend extends RateLimitBackend {

    /**
     * The server's name as operators know it, for log messages: {@code "Redis"}, {@code "PostgreSQL"}.
     * @return its name
     */
    String serverName();

    /**
     * The prefix of the backend's configuration properties, which log messages name:
     * {@code "limiter.redis"}. Its failure policy is {@code <prefix>.on-failure}.
     * @return the prefix
     */
    String propertyPrefix();

    /**
     * The shard a key's counter lives on, whose breaker its calls count against: {@code ""} when the
     * server is one.
     * @param limit the limit
     * @param key the counter key
     * @return the shard's name
     */
    String shardOf(LimitDefinition limit, String key);

    /**
     * The shards that serve keys now: a breaker of a shard not among them is dropped.
     * @return their names; {@code Set.of("")} when the server is one
     */
    Set<String> shards();

    /**
     * Counts permits that a failure policy admitted while the server did not decide, whether or not
     * they fit, in the background.
     * @param admitted the permits of each key
     * @return completes with what could not be counted (the server failed), empty when all was
     */
    CompletionStage<List<Admitted>> countAdmitted(List<Admitted> admitted);

    /**
     * Whether a failure is one limit's own, not the server's: a value the server cannot count with,
     * or data of that limit's keys it fails on. Such a failure trips no breaker and starts no outage.
     * The default: refused before sending ({@link IllegalArgumentException} in the causes).
     * @param failure what a call failed with
     * @return whether the server is not to blame
     */
    default boolean isLimitsOwn(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof IllegalArgumentException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /**
     * Whether a limit's own failure ({@link #isLimitsOwn}) is a wait for a key's data that another
     * client held past the backend's bound: it passes when that client lets go, so the key's next
     * calls try the server again and the failure is logged as a warning, not as a broken limit.
     * The default: never.
     * @param failure what a call failed with
     * @return whether the key's data was held by another client
     */
    default boolean isContention(Throwable failure) {
        return false;
    }

    /**
     * Whether the server answered the failed call (with an error) rather than not at all: an outage
     * of reach is probed for its end, one of answers is found ended by the next decision.
     * @param failure what a call failed with
     * @return whether the server answered
     */
    boolean answered(Throwable failure);

    /**
     * Permits a key was admitted while the server did not decide.
     * @param limit the limit
     * @param key the counter key
     * @param permits the permits admitted (a settle may make them negative)
     * @param lastAtMillis when the last of them was admitted
     */
    record Admitted(LimitDefinition limit, String key, long permits, long lastAtMillis) {
    }

}
