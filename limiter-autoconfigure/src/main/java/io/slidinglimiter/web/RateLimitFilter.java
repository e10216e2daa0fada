package io.slidinglimiter.web;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.expression.Expression;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.filter.OncePerRequestFilter;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.call.RequestCallContext;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * Where every rejection becomes a response. Applies the URL rules before the rest of the chain (a
 * denied request reaches no handler), then lets the request through and turns a
 * {@link RateLimitExceededException} thrown by a {@code @RateLimited} handler or bean into 429
 * through the {@link RateLimitRejectionHandler}.
 * <p>
 * Ordered after Spring Security's filter chain, so that keys can use the authenticated principal.
 */
public class RateLimitFilter extends OncePerRequestFilter {

    /** Just after Spring Security's filter chain (-100). */
    public static final int DEFAULT_ORDER = -90;

    static final String REJECTION_ATTRIBUTE = RateLimitFilter.class.getName() + ".rejection";

    private final List<HttpRule> rules;

    private final RateLimiters rateLimiters;

    private final LimiterExpressionParser parser;

    private final RejectionWriter rejections;

    private final boolean headersOnAllowed;

    private final ChargeSettlement charges;

    /**
     * Creates the filter.
     * @param rules the URL rules, in order
     * @param rateLimiters decides
     * @param parser the parser the rules' keys came from
     * @param rejectionHandler writes 429 responses
     * @param headersOnAllowed whether allowed responses carry the RateLimit headers
     * @param charges settles the rules that charge after the response
     */
    public RateLimitFilter(List<HttpRule> rules, RateLimiters rateLimiters, LimiterExpressionParser parser,
            RateLimitRejectionHandler rejectionHandler, boolean headersOnAllowed, ChargeSettlement charges) {
        this.rules = List.copyOf(rules);
        this.rateLimiters = rateLimiters;
        this.parser = parser;
        this.rejections = new RejectionWriter(rejectionHandler);
        this.headersOnAllowed = headersOnAllowed;
        this.charges = charges;
    }

    /** The asynchronous dispatch writes the headers of what was decided on other threads meanwhile. */
    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (isAsyncDispatch(request)) {
            resume(request, response, chain);
            return;
        }
        HttpRateLimitContext context = new HttpRateLimitContext(request, response, this.headersOnAllowed,
                this.rateLimiters::isShadow);
        request.setAttribute(HttpRateLimitContext.ATTRIBUTE, context);
        context.servedBy(Thread.currentThread());
        RuleAdmission admitted;
        try {
            try {
                admitted = applyRules(request, context);
            }
            catch (RateLimitExceededException denied) {
                this.rejections.write(request, response, context, denied);
                return;
            }
            try {
                chain.doFilter(request, response);
            }
            catch (ServletException | IOException | RuntimeException ex) {
                boolean rejected = this.rejections.write(request, response, context, ex);
                // What the container answers for an exception that escapes the filters: 500.
                settle(admitted, context, response, rejected ? response.getStatus() : 500);
                if (!rejected) {
                    throw ex;
                }
                return;
            }
            if (request.getAttribute(REJECTION_ATTRIBUTE) instanceof Throwable rejection) {
                this.rejections.write(request, response, context, rejection);
            }
            context.writePendingHeaders(response);
            settle(admitted, context, response, response.getStatus());
        }
        finally {
            ended(request, context);
            request.removeAttribute(REJECTION_ATTRIBUTE);
        }
    }

    /**
     * An asynchronous dispatch of a request the filter let through (a controller's
     * {@code CompletableFuture}, {@code Mono} or coroutine completed): the headers of the decisions taken
     * on other threads meanwhile are written here, on the container's thread, before the result is.
     */
    private void resume(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!(request.getAttribute(HttpRateLimitContext.ATTRIBUTE) instanceof HttpRateLimitContext context)) {
            chain.doFilter(request, response);
            return;
        }
        context.servedBy(Thread.currentThread());
        try {
            context.writePendingHeaders(response);
            chain.doFilter(request, response);
        }
        finally {
            ended(request, context);
        }
    }

    /**
     * A dispatch of the filter's ended: the context is kept for an asynchronous dispatch to come, which
     * writes the headers of the decisions taken meanwhile.
     */
    private static void ended(HttpServletRequest request, HttpRateLimitContext context) {
        context.servedBy(null);
        if (!request.isAsyncStarted()) {
            request.removeAttribute(HttpRateLimitContext.ATTRIBUTE);
        }
    }

    /**
     * Decides the rules that match, all-or-nothing; throws when they deny the request.
     * @return what to settle once the response is known, or null when no rule charges
     */
    private RuleAdmission applyRules(HttpServletRequest request, HttpRateLimitContext context) {
        if (this.rules.isEmpty()) {
            return null;
        }
        PathContainer path = RequestPath.parse(request.getRequestURI(), request.getContextPath())
                .pathWithinApplication();
        List<Expression> charges = new ArrayList<>(2);
        List<LimitRequest> requests = HttpRule.requestsFor(this.rules, request.getMethod(), path, this.rateLimiters,
                () -> new RequestCallContext(this.parser, context), charges);
        if (requests == null) {
            return null;
        }
        boolean charged = RuleAdmission.anyCharged(charges);
        Decisions decisions = charged ? this.rateLimiters.tryAcquireAllToSettle(requests)
                : this.rateLimiters.tryAcquireAll(requests);
        context.record(requests, decisions);
        if (!decisions.allowed()) {
            throw RateLimitExceededException.of(requests, decisions);
        }
        return charged ? new RuleAdmission(requests, charges, decisions) : null;
    }

    /** Settles the rules that charge, by the response's status; never fails the response. */
    private void settle(RuleAdmission admitted, HttpRateLimitContext context, HttpServletResponse response,
            int status) {
        if (admitted != null) {
            this.charges.settle(admitted.requests(), admitted.charges(), admitted.taken(),
                    new RequestCallContext(this.parser, context, status, response), context);
        }
    }

}
