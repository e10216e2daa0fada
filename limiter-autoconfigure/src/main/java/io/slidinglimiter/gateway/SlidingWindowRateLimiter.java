package io.slidinglimiter.gateway;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.http.HttpHeaders;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.RateLimitHeaders;
import io.slidinglimiter.call.ReactiveDecisions;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.web.ReactiveRateLimitContext;

/**
 * Spring Cloud Gateway's {@link RateLimiter}, deciding by Sliding Limiter: a route that uses it
 * with the standard {@code RequestRateLimiter} filter
 * ({@code rate-limiter: "#{@slidingWindowRateLimiter}"}) is limited by
 * {@code limiter.limits.<routeId>}, or by the limit that {@code limiter.gateway.routes.<routeId>}
 * names, keyed by the route's {@code KeyResolver}, on whichever backend that limit uses (in memory,
 * or shared through Redis on Lettuce's asynchronous API). Allowed and denied responses carry the
 * {@code RateLimit-Policy} and {@code RateLimit} headers; denied ones {@code Retry-After} too, and,
 * where the starter's {@code ReactiveRateLimitFilter} runs (the default), the problem body of every
 * other 429.
 * It has no per-route configuration of its own: limits live in {@code limiter.limits}.
 */
public class SlidingWindowRateLimiter implements RateLimiter<Object> {

    private static final Log logger = LogFactory.getLog(SlidingWindowRateLimiter.class);

    private final RateLimiters rateLimiters;

    private final Map<String, String> limitsByRoute;

    /** Each route's limit, resolved at its first request: the handle follows live changes and shadow mode. */
    private final Map<String, LimitRegistry.Handle> limitsOfRoutes = new ConcurrentHashMap<>();

    /** The routes whose limit is not defined, each with the failure its requests get. */
    private final Map<String, UndefinedLimitException> undefinedLimits = new ConcurrentHashMap<>();

    /**
     * Creates the rate limiter.
     * @param rateLimiters decides
     * @param limitsByRoute the limit of each route whose limit is not named by its id
     */
    public SlidingWindowRateLimiter(RateLimiters rateLimiters, Map<String, String> limitsByRoute) {
        this.rateLimiters = rateLimiters;
        this.limitsByRoute = Map.copyOf(limitsByRoute);
    }

    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        LimitRegistry.Handle handle = this.limitsOfRoutes.get(routeId);
        if (handle == null) {
            String limitName = this.limitsByRoute.getOrDefault(routeId, routeId);
            try {
                handle = this.rateLimiters.handle(limitName);
            }
            catch (IllegalArgumentException ex) {
                return Mono.error(undefined(routeId, limitName));
            }
            this.limitsOfRoutes.putIfAbsent(routeId, handle);
        }
        LimitRegistry.Handle route = handle;
        LimitDefinition limit = route.definition();
        List<LimitRequest> requests = List.of(new LimitRequest(limit, id, 1));
        return Mono.deferContextual((context) -> ReactiveDecisions.decide(this.rateLimiters, requests)
                .map((decisions) -> answer(route, limit, requests, decisions, ReactiveRateLimitContext.of(context))));
    }

    /**
     * The failure of a request on a route without a limit (a route built in Java: the start checks
     * those in properties). Logged once per route with what to define; each request fails with the
     * same short exception, without a stack trace for the gateway's error log to repeat.
     */
    private UndefinedLimitException undefined(String routeId, String limitName) {
        return this.undefinedLimits.computeIfAbsent(routeId, (route) -> {
            UndefinedLimitException failure = new UndefinedLimitException("Route '" + route + "' uses "
                    + "slidingWindowRateLimiter, but no limit '" + limitName + "' is defined: define limiter.limits."
                    + limitName + ", or name another limit in limiter.gateway.routes." + route);
            logger.error(failure.getMessage() + ". Every request on the route fails until then; logged once.");
            return failure;
        });
    }

    /**
     * The gateway's answer. Within the starter's filter the request also records the decision, and
     * a denial marks it rejected: the filter then answers the 429 with the problem body and the
     * headers, in place of the gateway's empty one.
     */
    private Response answer(LimitRegistry.Handle route, LimitDefinition limit, List<LimitRequest> requests,
            Decisions decisions, ReactiveRateLimitContext web) {
        Decision decision = decisions.get(0);
        if (route.isShadow()) {
            // Decided and counted; the route is never limited by it, and no header shows it.
            return new Response(true, Map.of());
        }
        RateLimitExceededException denial = decision.allowed() ? null
                : RateLimitExceededException.of(requests, decisions);
        if (web != null) {
            web.record(requests, decisions);
            if (denial != null) {
                web.reject(denial);
            }
        }
        String[] values = RateLimitHeaders.values(List.of(limit), List.of(decision));
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(RateLimitHeaders.POLICY, values[0]);
        headers.put(RateLimitHeaders.RATE_LIMIT, values[1]);
        if (denial != null) {
            headers.put(HttpHeaders.RETRY_AFTER, Long.toString(denial.getRetryAfterSeconds()));
        }
        return new Response(denial == null, headers);
    }

    @Override
    public Map<String, Object> getConfig() {
        return Map.of();
    }

    @Override
    public Class<Object> getConfigClass() {
        return Object.class;
    }

    @Override
    public Object newConfig() {
        return new Object();
    }

    /** A request on a route whose limit is not defined: the same exception each time, without a stack trace. */
    private static final class UndefinedLimitException extends IllegalStateException {

        UndefinedLimitException(String message) {
            super(message);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }

    }

}
