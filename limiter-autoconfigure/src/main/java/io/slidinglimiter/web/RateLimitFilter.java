package io.slidinglimiter.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.filter.OncePerRequestFilter;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
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

    /**
     * Creates the filter.
     * @param rules the URL rules, in order
     * @param rateLimiters decides
     * @param parser the parser the rules' keys came from
     * @param rejectionHandler writes 429 responses
     * @param headersOnAllowed whether allowed responses carry the RateLimit headers
     */
    public RateLimitFilter(List<HttpRule> rules, RateLimiters rateLimiters, LimiterExpressionParser parser,
            RateLimitRejectionHandler rejectionHandler, boolean headersOnAllowed) {
        this.rules = List.copyOf(rules);
        this.rateLimiters = rateLimiters;
        this.parser = parser;
        this.rejections = new RejectionWriter(rejectionHandler);
        this.headersOnAllowed = headersOnAllowed;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        HttpRateLimitContext context = new HttpRateLimitContext(request, response, this.headersOnAllowed);
        request.setAttribute(HttpRateLimitContext.ATTRIBUTE, context);
        try {
            try {
                applyRules(request, context);
            }
            catch (RateLimitExceededException denied) {
                this.rejections.write(request, response, context, denied);
                return;
            }
            try {
                chain.doFilter(request, response);
            }
            catch (ServletException | IOException | RuntimeException ex) {
                if (!this.rejections.write(request, response, context, ex)) {
                    throw ex;
                }
                return;
            }
            if (request.getAttribute(REJECTION_ATTRIBUTE) instanceof Throwable rejection) {
                this.rejections.write(request, response, context, rejection);
            }
        }
        finally {
            request.removeAttribute(HttpRateLimitContext.ATTRIBUTE);
            request.removeAttribute(REJECTION_ATTRIBUTE);
        }
    }

    /** Decides the rules that match, all-or-nothing; throws when they deny the request. */
    private void applyRules(HttpServletRequest request, HttpRateLimitContext context) {
        if (this.rules.isEmpty()) {
            return;
        }
        PathContainer path = RequestPath.parse(request.getRequestURI(), request.getContextPath())
                .pathWithinApplication();
        List<LimitRequest> requests = HttpRule.requestsFor(this.rules, request.getMethod(), path, this.rateLimiters,
                () -> new RequestCallContext(this.parser, context));
        if (requests == null) {
            return;
        }
        Decisions decisions = this.rateLimiters.tryAcquireAll(requests);
        context.record(requests, decisions);
        if (!decisions.allowed()) {
            throw RateLimitExceededException.of(requests, decisions);
        }
    }

}
