package io.slidinglimiter.web;

import java.io.IOException;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;


/**
 * Takes a limiter exception out of Spring MVC's hands before any {@code @ExceptionHandler} sees
 * it, so that an application's catch-all handler cannot turn a rejection into another status.
 * It leaves the response alone and hands the exception to {@link RateLimitFilter}, which writes it;
 * where the filter is not installed, it writes the response itself.
 */
public class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

    /** After Spring Boot's error attributes (which only record the error), before everything else. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1;

    private final RejectionWriter rejections;

    /**
     * Creates the resolver.
     * @param rejectionHandler writes 429 responses when the filter is not installed
     */
    public RateLimitExceptionResolver(RateLimitRejectionHandler rejectionHandler) {
        this.rejections = new RejectionWriter(rejectionHandler);
    }

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        RuntimeException failure = RejectionWriter.limiterFailure(ex);
        if (failure == null) {
            return null;
        }
        HttpRateLimitContext context = (request.getAttribute(HttpRateLimitContext.ATTRIBUTE)
                instanceof HttpRateLimitContext filtered && filtered.isFiltered()) ? filtered : null;
        if (context != null && request.getDispatcherType() != DispatcherType.ASYNC) {
            request.setAttribute(RateLimitFilter.REJECTION_ATTRIBUTE, failure);
            return new ModelAndView();
        }
        try {
            // On an asynchronous dispatch (a controller's CompletableFuture or Mono failed) the filter only
            // writes headers: the rejection is written here, with the headers the call recorded.
            return this.rejections.write(request, response, context, failure) ? new ModelAndView() : null;
        }
        catch (IOException writeFailure) {
            return null;
        }
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

}
