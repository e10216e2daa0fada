package io.slidinglimiter.web;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Predicate;

import reactor.util.context.ContextView;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.call.AppliedLimits;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.call.RateLimitHeaders;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * What the limiter knows of a WebFlux request.
 * <p>
 * Its request and principal for expressions, the
 * decisions taken so far (URL rules, then annotated methods) for the RateLimit headers, and the
 * rejection to answer with. Created by {@link ReactiveRateLimitFilter} for each request and put in
 * the Reactor context of the rest of the chain, where annotated methods returning {@code Mono} or
 * {@code Flux} find it when they are subscribed to.
 */
public final class ReactiveRateLimitContext implements InboundCall {

    /**
     * The request the current thread serves, where Reactor restores it from the Reactor context
     * ({@code spring.reactor.context-propagation=auto} with {@code io.micrometer:context-propagation}:
     * see {@link ReactiveRateLimitContextAccessor}).
     */
    static final ThreadLocal<ReactiveRateLimitContext> CURRENT = new ThreadLocal<>();

    private final ServerWebExchange exchange;

    private final Object principal;

    private final AppliedLimits applied;

    private volatile RuntimeException rejection;

    ReactiveRateLimitContext(ServerWebExchange exchange, Object principal, Predicate<String> shadow) {
        this.exchange = exchange;
        this.principal = principal;
        this.applied = new AppliedLimits(shadow);
    }

    /**
     * The context of the request a reactive pipeline serves.
     * @param context the pipeline's Reactor context
     * @return the request's context, or null outside a request (or without the filter)
     */
    public static ReactiveRateLimitContext of(ContextView context) {
        return context.getOrDefault(ReactiveRateLimitContext.class, null);
    }

    @Override
    public ServerHttpRequest request() {
        return this.exchange.getRequest();
    }

    @Override
    public Object principal() {
        return this.principal;
    }

    @Override
    public String clientAddress() {
        InetSocketAddress remote = this.exchange.getRequest().getRemoteAddress();
        if (remote == null) {
            return null;
        }
        return (remote.getAddress() != null) ? remote.getAddress().getHostAddress() : remote.getHostString();
    }

    @Override
    public void record(List<LimitRequest> requests, Decisions decisions) {
        this.applied.record(requests, decisions);
    }

    /**
     * The context of the request the current thread serves, for a method returning a plain value:
     * there only when Reactor propagates its context to thread locals automatically.
     * @return the request's context, or null
     */
    public static ReactiveRateLimitContext current() {
        return CURRENT.get();
    }

    /**
     * Marks the request rejected when {@code failure} is the limiter's (a denial, a missing key, a
     * cost that cannot be taken): whatever the application's exception handlers write instead is
     * dropped, and the filter answers with the rejection. Any other exception (a key expression
     * that fails, say) stays the application's to handle.
     * @param failure what deciding the call threw
     */
    @Override
    public void reject(RuntimeException failure) {
        if (failure instanceof RateLimitExceededException || failure instanceof InvalidCostException) {
            this.rejection = failure;
        }
    }

    RuntimeException rejection() {
        return this.rejection;
    }

    /** Notes a denial that may have been decided elsewhere than in this request's chain, for its 429's headers. */
    void recordDenial(RateLimitExceededException denied) {
        this.applied.recordDenial(denied);
    }

    /** Sets the RateLimit headers of every limit that applied so far, if any did. */
    void writeHeaders(HttpHeaders headers) {
        String[] values = this.applied.headerValues();
        if (values != null) {
            headers.set(RateLimitHeaders.POLICY, values[0]);
            headers.set(RateLimitHeaders.RATE_LIMIT, values[1]);
        }
    }

}
