package io.slidinglimiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

/**
 * Thrown when a rate limit denies a call. In a web request the library's filter turns it into
 * 429 Too Many Requests; elsewhere it reaches the caller.
 * <pre>{@code
 * try {
 *     reports.generate(customerId);
 * }
 * catch (RateLimitExceededException ex) {
 *     scheduler.schedule(() -> reports.generate(customerId), ex.getRetryAfter());
 * }
 * }</pre>
 */
public class RateLimitExceededException extends RuntimeException {

    private final String limitName;

    private final String key;

    private final long limit;

    private final Duration window;

    private final Duration retryAfter;

    private final List<String> violatedLimits;

    /**
     * Creates an exception for a denied call.
     * @param limitName the name of the (first) limit that denied the call
     * @param key the counter key, or null when none could be determined
     * @param limit that limit's permits per window
     * @param window that limit's window
     * @param retryAfter how long to wait before the same call can be admitted
     * @param violatedLimits the names of every limit that denied the call
     */
    public RateLimitExceededException(String limitName, String key, long limit, Duration window, Duration retryAfter,
            List<String> violatedLimits) {
        super("Rate limit '" + limitName + "' exceeded (" + limit + " per " + window + "); retry after " + retryAfter);
        this.limitName = limitName;
        this.key = key;
        this.limit = limit;
        this.window = window;
        this.retryAfter = retryAfter;
        this.violatedLimits = List.copyOf(violatedLimits);
    }

    /**
     * The exception for a call that {@code decisions} denied.
     * @param requests the limits asked, in order
     * @param decisions their decisions, not allowed
     * @return the exception, naming the first limit that denied the call
     */
    public static RateLimitExceededException of(List<LimitRequest> requests, Decisions decisions) {
        List<String> violated = new ArrayList<>();
        LimitRequest first = null;
        for (int i = 0; i < requests.size(); i++) {
            if (!decisions.get(i).allowed()) {
                first = (first != null) ? first : requests.get(i);
                violated.add(requests.get(i).limit().name());
            }
        }
        if (first == null) {
            throw new IllegalArgumentException("The call was allowed");
        }
        LimitDefinition limit = first.limit();
        return new RateLimitExceededException(limit.name(), first.key(), limit.limit(), limit.window(),
                decisions.retryAfter(), violated);
    }

    /**
     * The exception for a call whose key could not be determined, under
     * {@code limiter.empty-key=reject}: it waits one window.
     * @param limit the limit whose key was null or blank
     * @return the exception, with a null key
     */
    public static RateLimitExceededException forMissingKey(LimitDefinition limit) {
        return new RateLimitExceededException(limit.name(), null, limit.limit(), limit.window(), limit.window(),
                List.of(limit.name()));
    }

    /** @return the name of the first limit that denied the call */
    public String getLimitName() {
        return this.limitName;
    }

    /** @return the counter key, or null when none could be determined; never sent to HTTP clients */
    public String getKey() {
        return this.key;
    }

    /** @return the permits per window of that limit */
    public long getLimit() {
        return this.limit;
    }

    /** @return the window of that limit */
    public Duration getWindow() {
        return this.window;
    }

    /** @return how long to wait before the same call can be admitted */
    public Duration getRetryAfter() {
        return this.retryAfter;
    }

    /** @return the names of every limit that denied the call */
    public List<String> getViolatedLimits() {
        return this.violatedLimits;
    }

}
