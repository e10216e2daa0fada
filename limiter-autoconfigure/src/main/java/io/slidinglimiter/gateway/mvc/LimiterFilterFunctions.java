package io.slidinglimiter.gateway.mvc;

import java.util.List;
import java.util.function.Function;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.cloud.gateway.server.mvc.common.Shortcut;
import org.springframework.cloud.gateway.server.mvc.filter.SimpleFilterSupplier;
import org.springframework.context.ApplicationContext;
import org.springframework.expression.Expression;
import org.springframework.util.Assert;
import org.springframework.web.servlet.function.HandlerFilterFunction;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.RequestCallContext;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.HttpRateLimitContext;
import io.slidinglimiter.web.HttpRule;

/**
 * Rate limits for the routes of Spring Cloud Gateway Server MVC: one limit of
 * {@code limiter.limits}, per key, on whichever backend that limit uses. A denial is the library's
 * 429 with {@code Retry-After}, the {@code RateLimit} headers and the problem body, and the request
 * never reaches the downstream service; an admitted request carries the {@code RateLimit} headers.
 * In Java routes:
 * <pre class="code">
 * route("orders").GET("/orders/**", http())
 *         .before(uri("http://orders:8080"))
 *         .filter(LimiterFilterFunctions.rateLimit("orders", (request) -&gt; request.param("customer").orElse(null)))
 *         .build();
 * </pre>
 * In routes in properties, the {@code RateLimit} filter with a {@code limit} and a SpEL {@code key}
 * over {@code #request} (the route's {@code ServerRequest}), {@code #clientAddress} and
 * {@code #principal}: {@code RateLimit=orders,#request.headers().firstHeader('X-Client')}, or
 * {@code name: RateLimit} with {@code args: {limit: orders, key: ...}}.
 */
public final class LimiterFilterFunctions {

    private LimiterFilterFunctions() {
    }

    /**
     * Limits a route by {@code limiter.limits.<limit>}, keyed by a function of the request.
     * @param limit the name of a limit under {@code limiter.limits}
     * @param keyResolver the request's key; null or blank is an empty key ({@code limiter.empty-key})
     * @return the filter
     */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(String limit,
            Function<ServerRequest, String> keyResolver) {
        Assert.hasText(limit, "limit must name a limit under limiter.limits");
        Assert.notNull(keyResolver, "keyResolver must not be null");
        RouteLimit route = new RouteLimit(limit);
        return (request, next) -> {
            String key = keyResolver.apply(request);
            return route.filter(request, next, (key == null || key.isBlank()) ? null : key, "the route's key resolver");
        };
    }

    /**
     * Limits a route by {@code limiter.limits.<limit>}, keyed by a SpEL expression over
     * {@code #request} (the route's {@code ServerRequest}; {@code #request.servletRequest()} is the
     * servlet request), {@code #clientAddress} and {@code #principal}: the {@code RateLimit} filter
     * of routes in properties, {@code name: RateLimit} with
     * {@code args: {limit: orders, key: "#clientAddress"}}.
     * @param limit the name of a limit under {@code limiter.limits}
     * @param key the key expression; blank for one key shared by every request
     * @return the filter
     */
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(String limit, String key) {
        Assert.hasText(limit, "limit must name a limit under limiter.limits");
        RouteLimit route = new RouteLimit(limit);
        String source = (key == null || key.isBlank()) ? null : key;
        return (request, next) -> route.filter(request, next, route.keyOf(request, source), null);
    }

    /**
     * The {@code RateLimit} filter of routes in properties in the shortcut form,
     * {@code RateLimit=<limit>,<key>}: the first value names the limit, the rest is the key (commas
     * and all; the gateway trims the spaces around each comma), as in
     * {@code RateLimit=orders,#request.headers().firstHeader('X-Client')}.
     * @param limitAndKey the values, joined by commas
     * @return the filter
     */
    @Shortcut(type = Shortcut.Type.LIST, fieldOrder = "limitAndKey")
    public static HandlerFilterFunction<ServerResponse, ServerResponse> rateLimit(String limitAndKey) {
        String[] parts = shortcut(limitAndKey);
        return rateLimit(parts[0], parts[1]);
    }

    /**
     * The limit and the key of the shortcut form's values: the first value, and the rest joined
     * by commas (null when there is none).
     * @param limitAndKey the values, joined by commas
     * @return the limit and the key
     */
    public static String[] shortcut(String limitAndKey) {
        String values = (limitAndKey != null) ? limitAndKey.trim() : "";
        int comma = values.indexOf(',');
        String limit = (comma < 0) ? values : values.substring(0, comma).trim();
        String key = (comma < 0) ? null : values.substring(comma + 1).trim();
        return new String[] { limit, (key == null || key.isEmpty()) ? null : key };
    }

    /** Makes {@link LimiterFilterFunctions} the {@code RateLimit} filter of routes in properties. */
    public static class FilterSupplier extends SimpleFilterSupplier {

        public FilterSupplier() {
            super(LimiterFilterFunctions.class);
        }

    }

    /** One route's limit: its collaborators are the application's, found at its first request. */
    private static final class RouteLimit {

        private final String limit;

        private volatile Collaborators collaborators;

        private volatile KeyExpression key;

        RouteLimit(String limit) {
            this.limit = limit;
        }

        /** Decides the request; throws the denial, which the starter's filter answers. */
        ServerResponse filter(ServerRequest request, HandlerFunction<ServerResponse> next, String key,
                String emptyKeySource) throws Exception {
            Collaborators collaborators = collaborators(request);
            LimitRegistry.Handle limit = collaborators.limit();
            if (key == null) {
                if (emptyKeySource == null || collaborators.allowEmptyKey()) {
                    return next.handle(request);
                }
                throw RateLimitExceededException.forMissingKey(limit.definition(), emptyKeySource);
            }
            Decision decision = collaborators.rateLimiters().tryAcquire(limit, key, 1);
            // A limit in shadow mode never denies the request; its decision is counted, and shown nowhere.
            if (limit.isShadow()) {
                return next.handle(request);
            }
            List<LimitRequest> requests = List.of(new LimitRequest(limit.definition(), key, 1));
            Decisions decisions = new Decisions(decision.allowed(), List.of(decision));
            HttpRateLimitContext web = HttpRateLimitContext.current();
            if (web != null) {
                web.record(requests, decisions);
            }
            if (!decision.allowed()) {
                throw RateLimitExceededException.of(requests, decisions);
            }
            return next.handle(request);
        }

        /** The key the expression gives this request: null when empty and empty keys pass. */
        String keyOf(ServerRequest request, String source) {
            Collaborators collaborators = collaborators(request);
            KeyExpression key = this.key;
            if (key == null) {
                Expression expression = (source != null)
                        ? collaborators.parser().parse(source, HttpRule.KEY_VARIABLES) : null;
                key = new KeyExpression(expression, "the RateLimit filter of limit '" + this.limit + "'",
                        collaborators.allowEmptyKey());
                this.key = key;
            }
            if (!key.needsContext()) {
                return KeyExpression.SHARED_KEY;
            }
            return key.keyFor(collaborators.limit().definition(),
                    new RequestCallContext(collaborators.parser(), new RouteCall(request)));
        }

        private Collaborators collaborators(ServerRequest request) {
            Collaborators collaborators = this.collaborators;
            if (collaborators == null) {
                ApplicationContext context = MvcUtils.getApplicationContext(request);
                RateLimiters rateLimiters = context.getBean(RateLimiters.class);
                collaborators = new Collaborators(rateLimiters, rateLimiters.handle(this.limit),
                        context.getBean(LimiterExpressionParser.class),
                        "allow".equalsIgnoreCase(context.getEnvironment().getProperty("limiter.empty-key", "reject")));
                this.collaborators = collaborators;
            }
            return collaborators;
        }

    }

    /** What a route's requests are decided with, resolved once: the limit by its handle, not its name. */
    private record Collaborators(RateLimiters rateLimiters, LimitRegistry.Handle limit, LimiterExpressionParser parser,
            boolean allowEmptyKey) {
    }

}
