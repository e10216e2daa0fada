package io.slidinglimiter.call;

import java.util.List;
import java.util.concurrent.Executor;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * Decisions for reactive callers, never on an event loop's time: the WebFlux filter, annotated
 * {@code Mono} or {@code Flux} methods, the gateway.
 * <p>
 * In memory they are made at once; on Redis
 * through Lettuce's asynchronous API, no thread waiting for the reply; what can only wait runs on
 * Reactor's bounded elastic scheduler. Needs Reactor only.
 */
public final class ReactiveDecisions {

    /** Runs work that may block: Reactor's bounded elastic scheduler. */
    private static final Executor BLOCKING = (task) -> Schedulers.boundedElastic().schedule(task);

    private ReactiveDecisions() {
    }

    /**
     * Decides, when subscribed to.
     * @param rateLimiters decides
     * @param requests the limits asked
     * @return the decisions
     */
    public static Mono<Decisions> decide(RateLimiters rateLimiters, List<LimitRequest> requests) {
        return Mono.fromCompletionStage(() -> rateLimiters.tryAcquireAllAsync(requests, BLOCKING));
    }

    /**
     * Settles a charged call that ended, when subscribed to, as
     * {@link ChargeSettlement#settle ChargeSettlement.settle} does on the calling thread: never fails.
     * @param rateLimiters settles
     * @param settlement evaluates the charges and accounts for the settle
     * @param requests the requests as admitted
     * @param chargeOf the charge of each request, null where it costs its cost
     * @param taken their decisions
     * @param ended the variables of the call once it ended
     * @param web the request the call serves, or null
     * @return completes when settled (or when the settle was given up and counted)
     */
    public static Mono<Void> settle(RateLimiters rateLimiters, ChargeSettlement settlement,
            List<LimitRequest> requests, List<Expression> chargeOf, Decisions taken, EvaluationContext ended,
            InboundCall web) {
        return Mono.defer(() -> {
            long[] charges = settlement.charges(requests, chargeOf, ended);
            if (charges == null) {
                return Mono.empty();
            }
            return Mono.fromCompletionStage(() -> rateLimiters.settleAsync(requests, taken, charges, BLOCKING))
                    .doOnSuccess((done) -> settlement.settled(requests, chargeOf, taken, charges, null, web))
                    .onErrorResume(RuntimeException.class, (ex) -> {
                        settlement.settled(requests, chargeOf, taken, charges, ex, web);
                        return Mono.empty();
                    });
        });
    }

}
