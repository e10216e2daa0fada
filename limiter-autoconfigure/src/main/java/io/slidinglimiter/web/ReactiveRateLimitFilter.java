package io.slidinglimiter.web;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.expression.Expression;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.call.ReactiveDecisions;
import io.slidinglimiter.call.RequestCallContext;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * Where every rejection of a WebFlux request becomes a response, as {@link RateLimitFilter} does in
 * a servlet application.
 * <p>
 * Applies the URL rules before the rest of the chain (a denied request
 * reaches no handler), puts the request's {@link ReactiveRateLimitContext} in the Reactor context
 * of the chain, and answers a {@link RateLimitExceededException} from a {@code @RateLimited}
 * method with 429, headers and a problem body. What the application's {@code @ExceptionHandler}s
 * write for a rejection is dropped, so none can turn it into another status.
 * <p>
 * Decisions never take an event loop's time: see {@link ReactiveDecisions}. Ordered after Spring
 * Security's {@code WebFilterChainProxy}, so that keys can use the authenticated principal.
 */
public class ReactiveRateLimitFilter implements WebFilter, Ordered {

    private static final Log logger = LogFactory.getLog(ReactiveRateLimitFilter.class);

    private static final MediaType PROBLEM_JSON = MediaType.parseMediaType(Rejection.CONTENT_TYPE);

    private final List<HttpRule> rules;

    private final RateLimiters rateLimiters;

    private final LimiterExpressionParser parser;

    private final boolean headersOnAllowed;

    private final int order;

    private final ChargeSettlement charges;

    /**
     * Creates the filter.
     * @param rules the URL rules, in order
     * @param rateLimiters decides
     * @param parser the parser the rules' keys came from
     * @param headersOnAllowed whether allowed responses carry the RateLimit headers
     * @param order the filter's order
     * @param charges settles the rules that charge after the response
     */
    public ReactiveRateLimitFilter(List<HttpRule> rules, RateLimiters rateLimiters, LimiterExpressionParser parser,
            boolean headersOnAllowed, int order, ChargeSettlement charges) {
        this.rules = List.copyOf(rules);
        this.rateLimiters = rateLimiters;
        this.parser = parser;
        this.headersOnAllowed = headersOnAllowed;
        this.order = order;
        this.charges = charges;
    }

    @Override
    public int getOrder() {
        return this.order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        return exchange.getPrincipal().map(Optional::<Object>of).defaultIfEmpty(Optional.empty())
                .flatMap((principal) -> filter(exchange, chain, new ReactiveRateLimitContext(exchange,
                        principal.orElse(null), this.rateLimiters::isShadow)));
    }

    private Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain, ReactiveRateLimitContext context) {
        ServerHttpResponse response = exchange.getResponse();
        if (this.headersOnAllowed) {
            response.beforeCommit(() -> {
                if (context.rejection() == null) {
                    context.writeHeaders(response.getHeaders());
                }
                return Mono.empty();
            });
        }
        ServerWebExchange limited = exchange.mutate().response(new RejectingResponse(response, context)).build();
        RuleAdmission[] admitted = { null };
        return applyRules(context, exchange)
                .doOnNext((admission) -> admitted[0] = admission)
                .then(Mono.defer(() -> chain.filter(limited)))
                .onErrorResume((failure) -> RejectionWriter.limiterFailure(failure) != null, (failure) -> {
                    context.reject(RejectionWriter.limiterFailure(failure));
                    return Mono.empty();
                })
                .then(Mono.defer(() -> (context.rejection() != null) ? reject(exchange, context) : Mono.empty()))
                .then(Mono.defer(() -> settle(admitted[0], exchange, context)))
                .contextWrite((reactorContext) -> reactorContext.put(ReactiveRateLimitContext.class, context));
    }

    /**
     * Decides the rules that match, all-or-nothing; fails with the rejection when they deny the request.
     * @return what to settle once the response is known; empty when no rule charges
     */
    private Mono<RuleAdmission> applyRules(ReactiveRateLimitContext context, ServerWebExchange exchange) {
        return this.rules.isEmpty() ? Mono.empty() : Mono.defer(() -> decideRules(context, exchange));
    }

    private Mono<RuleAdmission> decideRules(ReactiveRateLimitContext context, ServerWebExchange exchange) {
        PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
        List<Expression> charges = new ArrayList<>(2);
        List<LimitRequest> requests = HttpRule.requestsFor(this.rules, exchange.getRequest().getMethod().name(), path,
                this.rateLimiters, () -> new RequestCallContext(this.parser, context), charges);
        if (requests == null) {
            return Mono.empty();
        }
        List<LimitRequest> asked = requests;
        return ReactiveDecisions.decide(this.rateLimiters, asked).flatMap((decisions) -> {
            context.record(asked, decisions);
            if (!decisions.allowed()) {
                return Mono.error(RateLimitExceededException.of(asked, decisions));
            }
            return RuleAdmission.anyCharged(charges) ? Mono.just(new RuleAdmission(asked, charges, decisions))
                    : Mono.empty();
        });
    }

    /**
     * Settles the rules that charge, by the response's status, without blocking an event loop;
     * never fails the response.
     */
    private Mono<Void> settle(RuleAdmission admitted, ServerWebExchange exchange, ReactiveRateLimitContext context) {
        if (admitted == null) {
            return Mono.empty();
        }
        ServerHttpResponse response = exchange.getResponse();
        Integer status = (response.getStatusCode() != null) ? response.getStatusCode().value() : 200;
        return ReactiveDecisions.settle(this.rateLimiters, this.charges, admitted.requests(), admitted.charges(),
                admitted.taken(), new RequestCallContext(this.parser, context, status, response), context);
    }

    /** Answers with the rejection, through the response the application's handlers could not write to. */
    private static Mono<Void> reject(ServerWebExchange exchange, ReactiveRateLimitContext context) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.empty();
        }
        RuntimeException cause = context.rejection();
        Rejection rejection;
        if (cause instanceof RateLimitExceededException denied) {
            if (logger.isDebugEnabled()) {
                logger.debug("Denied " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath()
                        + ": limit '" + denied.getLimitName() + "'");
            }
            rejection = Rejection.of(denied);
            context.recordDenial(denied);
        }
        else {
            rejection = Rejection.of((InvalidCostException) cause);
        }
        HttpHeaders headers = response.getHeaders();
        response.setStatusCode(HttpStatusCode.valueOf(rejection.status()));
        context.writeHeaders(headers);
        if (rejection.retryAfterSeconds() >= 0) {
            headers.set(HttpHeaders.RETRY_AFTER, Long.toString(rejection.retryAfterSeconds()));
        }
        byte[] body = rejection.body().getBytes(StandardCharsets.UTF_8);
        headers.setContentType(PROBLEM_JSON);
        headers.setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /**
     * The response the rest of the chain writes to: once the request is rejected, what the
     * application writes (an exception handler's answer to the rejection) is dropped, so that the
     * filter answers instead.
     */
    private static final class RejectingResponse extends ServerHttpResponseDecorator {

        private final ReactiveRateLimitContext context;

        RejectingResponse(ServerHttpResponse delegate, ReactiveRateLimitContext context) {
            super(delegate);
            this.context = context;
        }

        @Override
        public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
            if (this.context.rejection() != null) {
                return Flux.from(body).doOnNext(DataBufferUtils::release).then();
            }
            return super.writeWith(body);
        }

        @Override
        public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            if (this.context.rejection() != null) {
                return Flux.from(body).flatMap(Flux::from).doOnNext(DataBufferUtils::release).then();
            }
            return super.writeAndFlushWith(body);
        }

        @Override
        public Mono<Void> setComplete() {
            return (this.context.rejection() != null) ? Mono.empty() : super.setComplete();
        }

        @Override
        public boolean setStatusCode(HttpStatusCode status) {
            return (this.context.rejection() != null) ? false : super.setStatusCode(status);
        }

    }

}
