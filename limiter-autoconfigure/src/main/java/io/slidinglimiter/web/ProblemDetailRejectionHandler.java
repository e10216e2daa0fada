package io.slidinglimiter.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.slidinglimiter.RateLimitExceededException;

/**
 * The default rejection.
 * <p>
 * 429 Too Many Requests, {@code Retry-After} in whole seconds rounded up,
 * and an RFC 9457 {@code application/problem+json} body of the IETF quota-exceeded type. A call
 * denied for a {@linkplain RateLimitExceededException#isMissingKey() missing key} is 400 Bad
 * Request instead, without {@code Retry-After}: waiting would not help it.
 */
public class ProblemDetailRejectionHandler implements RateLimitRejectionHandler {

    /** The problem type of the IETF RateLimit headers draft. */
    public static final String QUOTA_EXCEEDED = Rejection.QUOTA_EXCEEDED;

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RateLimitExceededException exception)
            throws IOException {
        write(response, Rejection.of(exception));
    }

    static void write(HttpServletResponse response, Rejection rejection) throws IOException {
        response.setStatus(rejection.status());
        if (rejection.retryAfterSeconds() >= 0) {
            response.setHeader("Retry-After", Long.toString(rejection.retryAfterSeconds()));
        }
        byte[] bytes = rejection.body().getBytes(StandardCharsets.UTF_8);
        response.setContentType(Rejection.CONTENT_TYPE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

}
