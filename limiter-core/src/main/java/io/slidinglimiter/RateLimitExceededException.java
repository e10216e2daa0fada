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
 * <p>
 * A call may also be denied because its key could not be determined (an anonymous caller of a
 * {@code #principal?.name} limit, under {@code limiter.empty-key=reject}): {@link #isMissingKey()}
 * tells it apart. Waiting does not help such a call, so its retry-after is zero, and in a web
 * request it is answered 400 Bad Request, not 429.
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

    /** The limit that denied the call. */
    private final String limitName;

    /** The counter key, or null for a missing key. */
    private final String key;

    /** The permits per window of that limit. */
    private final long limit;

    /** The window of that limit. */
    private final Duration window;

    /** How long to wait before the same call can fit. */
    private final Duration retryAfter;

    /** Every limit that denied the call, in the order asked. */
    private final List<String> violatedLimits;

    /** Whether the call was denied because its key was missing. */
    private final boolean missingKey;

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
        this(describe(limitName, limit, window, retryAfter, ""), limitName, key, limit, window, retryAfter,
                violatedLimits, false);
    }

    private RateLimitExceededException(String message, String limitName, String key, long limit, Duration window,
            Duration retryAfter, List<String> violatedLimits, boolean missingKey) {
        // A denial is an answer, not a fault: no stack trace to fill on the reject path.
        super(message, null, false, false);
        this.missingKey = missingKey;
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
        Decision denial = decisions.get(requests.indexOf(first));
        String costNote = (first.cost() > 1)
                ? " This call costs " + first.cost() + "; " + denial.remaining() + " left." : "";
        if (denial.isUnchecked()) {
            costNote = " The limit could not be checked (its store did not answer), and it rejects calls until it can.";
        }
        return new RateLimitExceededException(describe(limit.name(), limit.limit(), limit.window(),
                decisions.retryAfter(), costNote), limit.name(), first.key(), limit.limit(), limit.window(),
                decisions.retryAfter(), violated, false);
    }

    /**
     * The exception for a call whose key could not be determined, under
     * {@code limiter.empty-key=reject}.
     * @param limit the limit whose key was null or blank
     * @param keySource what the key is made from, to name in the message (an expression)
     * @return the exception, with a null key, a zero retry-after and {@link #isMissingKey()} true
     */
    public static RateLimitExceededException forMissingKey(LimitDefinition limit, String keySource) {
        return new RateLimitExceededException("Rate limit '" + limit.name() + "' needs a key, but " + keySource
                + " gave none for this call. Waiting will not help: send what the key is made from.", limit.name(),
                null, limit.limit(), limit.window(), Duration.ZERO, List.of(limit.name()), true);
    }

    /**
     * The one wording of a denial, in exceptions and HTTP responses alike:
     * {@code Rate limit 'login' of 5 per 60s exceeded; retry after 12s.}
     */
    private static String describe(String limitName, long limit, Duration window, Duration retryAfter, String note) {
        long windowMillis = window.toMillis();
        String per = (windowMillis % 1000 == 0) ? (windowMillis / 1000) + "s" : windowMillis + "ms";
        return "Rate limit '" + limitName + "' of " + limit + " per " + per + " exceeded; retry after "
                + wholeSeconds(retryAfter) + "s." + note;
    }

    private static long wholeSeconds(Duration duration) {
        return Math.max(1, (duration.toMillis() + 999) / 1000);
    }

    /**
     * Whether the call was denied because its key could not be determined, not because a limit was
     * used up.
     * @return {@code true} for a missing key
     */
    public boolean isMissingKey() {
        return this.missingKey;
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

    /**
     * The wait in whole seconds, rounded up and never 0, as the message and {@code Retry-After}
     * give it.
     * @return the seconds to wait
     */
    public long getRetryAfterSeconds() {
        return wholeSeconds(this.retryAfter);
    }

    /** @return the names of every limit that denied the call */
    public List<String> getViolatedLimits() {
        return this.violatedLimits;
    }

}
