package io.slidinglimiter.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.aop.InvalidCostException;

/**
 * Takes a limiter exception out of Spring MVC's hands before any {@code @ExceptionHandler} sees
 * it, so that an application's catch-all handler cannot turn a rejection into another status.
 * It leaves the response alone and hands the exception to {@link RateLimitFilter}, which writes it.
 */
public class RateLimitExceptionResolver implements HandlerExceptionResolver, Ordered {

    /** After Spring Boot's error attributes (which only record the error), before everything else. */
    public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1;

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        if (!(request.getAttribute(HttpRateLimitContext.ATTRIBUTE) instanceof HttpRateLimitContext context)
                || !context.isFiltered()) {
            return null;
        }
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof RateLimitExceededException || cause instanceof InvalidCostException) {
                request.setAttribute(RateLimitFilter.REJECTION_ATTRIBUTE, cause);
                return new ModelAndView();
            }
        }
        return null;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

}
