package io.slidinglimiter.web;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;

/**
 * The default answer to a limiter exception, the same in both stacks.
 * <p>
 * 429 Too Many Requests with
 * {@code Retry-After} in whole seconds rounded up and an RFC 9457 {@code application/problem+json}
 * body of the IETF quota-exceeded type; 400 Bad Request, without {@code Retry-After}, for a
 * {@linkplain RateLimitExceededException#isMissingKey() missing key} or a cost that cannot be taken,
 * since waiting would not help.
 *
 * @param status the status code
 * @param retryAfterSeconds the {@code Retry-After} value, or -1 for none
 * @param body the problem, as JSON
 */
public record Rejection(int status, long retryAfterSeconds, String body) {

    /** The problem type of the IETF RateLimit headers draft. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    /** The body's media type. */
    public static final String CONTENT_TYPE = ProblemJson.CONTENT_TYPE;

    /**
     * The answer to a denial.
     * @param exception the denial
     * @return its answer
     */
    public static Rejection of(RateLimitExceededException exception) {
        if (exception.isMissingKey()) {
            return new Rejection(400, -1, ProblemJson.body(400, "Bad Request", "about:blank", exception.getMessage(),
                    ",\"violated-policies\":[" + ProblemJson.quote(exception.getLimitName()) + "]"));
        }
        long retryAfterSeconds = exception.getRetryAfterSeconds();
        StringBuilder violated = new StringBuilder();
        for (String name : exception.getViolatedLimits()) {
            violated.append((violated.length() > 0) ? "," : "").append(ProblemJson.quote(name));
        }
        return new Rejection(429, retryAfterSeconds, ProblemJson.body(429, "Too Many Requests", QUOTA_EXCEEDED,
                exception.getMessage(), ",\"violated-policies\":[" + violated + "],\"retryAfter\":" + retryAfterSeconds));
    }

    /**
     * The answer to a cost that cannot be taken.
     * @param exception the failure
     * @return its answer
     */
    public static Rejection of(InvalidCostException exception) {
        return new Rejection(400, -1, ProblemJson.body(400, "Bad Request", "about:blank", exception.getMessage(), ""));
    }

}
