package io.slidinglimiter.web;

import io.micrometer.context.ThreadLocalAccessor;

/**
 * Lets Reactor's automatic context propagation ({@code spring.reactor.context-propagation=auto})
 * put a WebFlux request's {@link ReactiveRateLimitContext} in a thread local while the request's
 * operators run, so that a {@code @RateLimited} method returning a plain value, called from them,
 * sees its request. Registered with {@code io.micrometer.context.ContextRegistry} through
 * {@code META-INF/services}; its key is the one the filter writes the context under.
 */
public final class ReactiveRateLimitContextAccessor implements ThreadLocalAccessor<ReactiveRateLimitContext> {

    @Override
    public Object key() {
        return ReactiveRateLimitContext.class;
    }

    @Override
    public ReactiveRateLimitContext getValue() {
        return ReactiveRateLimitContext.CURRENT.get();
    }

    @Override
    public void setValue(ReactiveRateLimitContext value) {
        ReactiveRateLimitContext.CURRENT.set(value);
    }

    @Override
    public void setValue() {
        ReactiveRateLimitContext.CURRENT.remove();
    }

}
