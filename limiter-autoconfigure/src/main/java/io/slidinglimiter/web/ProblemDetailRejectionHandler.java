package io.slidinglimiter.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.slidinglimiter.RateLimitExceededException;

/**
 * The default rejection: 429 Too Many Requests, {@code Retry-After} in whole seconds rounded up,
 * and an RFC 9457 {@code application/problem+json} body of the IETF quota-exceeded type.
 */
public class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

    /** The problem type of the IETF RateLimit headers draft. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RateLimitExceededException exception)
            throws IOException {
        long retryAfterSeconds = RateLimitHeaders.seconds(exception.getRetryAfter());
        response.setStatus(429);
        response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        StringBuilder violated = new StringBuilder();
        for (String name : exception.getViolatedLimits()) {
            violated.append((violated.length() > 0) ? "," : "").append(ProblemJson.quote(name));
        }
        String detail = "Rate limit '" + exception.getLimitName() + "' of " + exception.getLimit() + " per "
                + RateLimitHeaders.seconds(exception.getWindow()) + "s exceeded; retry after " + retryAfterSeconds
                + "s.";
        ProblemJson.write(response, 429, "Too Many Requests", QUOTA_EXCEEDED, detail,
                ",\"violated-policies\":[" + violated + "],\"retryAfter\":" + retryAfterSeconds);
    }

}
