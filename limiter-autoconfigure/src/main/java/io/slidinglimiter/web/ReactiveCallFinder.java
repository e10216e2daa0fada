package io.slidinglimiter.web;

import reactor.util.context.ContextView;

import io.slidinglimiter.call.CallFinder;
import io.slidinglimiter.call.InboundCall;

/**
 * Finds the WebFlux request a subscription serves, for the limits of annotated methods: in its
 * Reactor context, or on a thread that context propagation wrote it to.
 */
public final class ReactiveCallFinder implements CallFinder {

    @Override
    public InboundCall onThread() {
        return ReactiveRateLimitContext.current();
    }

    @Override
    public InboundCall inContext(Object context) {
        return ReactiveRateLimitContext.of((ContextView) context);
    }

    @Override
    public boolean throughReactor() {
        return true;
    }

}
