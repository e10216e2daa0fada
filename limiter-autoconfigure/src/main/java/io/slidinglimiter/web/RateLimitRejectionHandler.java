package io.slidinglimiter.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import io.slidinglimiter.RateLimitExceededException;

/**
 * Writes the response to a request that a rate limit denied. Declare a bean of this type to replace
 * the default 429 {@code application/problem+json} response.
 * <pre>{@code
 * @Bean
 * RateLimitRejectionHandler plainRejection() {
 *     return (request, response, exception) -> {
 *         response.setStatus(429);
 *         response.setHeader("Retry-After", String.valueOf(exception.getRetryAfter().toSeconds() + 1));
 *         response.getWriter().write("Slow down");
 *     };
 * }
 * }</pre>
 * The {@code RateLimit} and {@code RateLimit-Policy} headers are already set when it is called.
 */
@FunctionalInterface
public interface RateLimitRejectionHandler {

    /**
     * Writes the rejection.
     * @param request the denied request
     * @param response its response, not committed
     * @param exception what denied it; its key must not be sent to the client
     * @throws IOException if writing fails
     */
    void handle(HttpServletRequest request, HttpServletResponse response, RateLimitExceededException exception)
            throws IOException;

}
