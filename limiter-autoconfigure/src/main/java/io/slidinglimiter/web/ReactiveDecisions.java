package io.slidinglimiter.web;

import java.util.List;
import java.util.concurrent.Executor;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * Decisions for reactive callers (the WebFlux filter, annotated {@code Mono} and {@code Flux}
 * methods, the gateway): never on an event loop's time. In memory they are made at once; on Redis
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

}
