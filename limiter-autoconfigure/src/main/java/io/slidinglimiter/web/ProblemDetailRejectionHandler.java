package io.slidinglimiter.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.slidinglimiter.RateLimitExceededException;

/**
 * The default rejection: 429 Too Many Requests, {@code Retry-After} in whole seconds rounded up,
 * and an RFC 9457 {@code application/problem+json} body of the IETF quota-exceeded type. A call
 * denied for a {@linkplain RateLimitExceededException#isMissingKey() missing key} is 400 Bad
 * Request instead, without {@code Retry-After}: waiting would not help it.
 */
public class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

    /** The problem type of the IETF RateLimit headers draft. */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RateLimitExceededException exception)
            throws IOException {
        if (exception.isMissingKey()) {
            response.setStatus(400);
            ProblemJson.write(response, 400, "Bad Request", "about:blank", exception.getMessage(),
                    ",\"violated-policies\":[" + ProblemJson.quote(exception.getLimitName()) + "]");
            return;
        }
        long retryAfterSeconds = exception.getRetryAfterSeconds();
        response.setStatus(429);
        response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        StringBuilder violated = new StringBuilder();
        for (String name : exception.getViolatedLimits()) {
            violated.append((violated.length() > 0) ? "," : "").append(ProblemJson.quote(name));
        }
        ProblemJson.write(response, 429, "Too Many Requests", QUOTA_EXCEEDED, exception.getMessage(),
                ",\"violated-policies\":[" + violated + "],\"retryAfter\":" + retryAfterSeconds);
    }

}
