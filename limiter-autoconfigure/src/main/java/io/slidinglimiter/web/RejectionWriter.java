package io.slidinglimiter.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.InvalidCostException;

/**
 * Turns a limiter exception into its response: 429 through the {@link RateLimitRejectionHandler}
 * with the RateLimit headers of the request, or 400 for a cost that cannot be taken.
 */
final class RejectionWriter {

    private static final Log logger = LogFactory.getLog(RejectionWriter.class);

    private final RateLimitRejectionHandler rejectionHandler;

    RejectionWriter(RateLimitRejectionHandler rejectionHandler) {
        this.rejectionHandler = rejectionHandler;
    }

    /** The limiter exception in a failure's cause chain, or null. */
    static RuntimeException limiterFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RateLimitExceededException || cause instanceof InvalidCostException) {
                return (RuntimeException) cause;
            }
        }
        return null;
    }

    /**
     * Writes the response for the limiter exception in {@code failure}'s cause chain.
     * @param context the request's limiter context, for the headers; null when there is none
     * @return false if the chain holds no limiter exception, or the response is already committed
     */
    boolean write(HttpServletRequest request, HttpServletResponse response, HttpRateLimitContext context,
            Throwable failure) throws IOException {
        RuntimeException cause = limiterFailure(failure);
        if (cause == null || response.isCommitted()) {
            return false;
        }
        response.resetBuffer();
        if (cause instanceof RateLimitExceededException denied) {
            if (logger.isDebugEnabled()) {
                logger.debug("Denied " + request.getMethod() + " " + request.getRequestURI() + ": limit '"
                        + denied.getLimitName() + "'");
            }
            if (context != null) {
                context.recordDenial(denied);
                context.writeHeaders(response);
            }
            this.rejectionHandler.handle(request, response, denied);
        }
        else {
            ProblemDetailRejectionHandler.write(response, Rejection.of((InvalidCostException) cause));
        }
        return true;
    }

}
