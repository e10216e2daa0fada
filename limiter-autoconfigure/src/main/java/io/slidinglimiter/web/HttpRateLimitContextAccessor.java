package io.slidinglimiter.web;

import io.micrometer.context.ThreadLocalAccessor;
import io.slidinglimiter.call.InboundCall;

/**
 * Lets the context-propagation library carry a servlet request's {@link HttpRateLimitContext} to
 * where the request's work goes on after a thread hop. Spring MVC writes it into the Reactor
 * context of a {@code Mono} or {@code suspend} handler's result, so that a {@code suspend}
 * {@code @RateLimited} bean called after the handler awaited something records its decisions for
 * the request's headers; with automatic propagation on, it is restored as a thread local where
 * Reactor or a {@code ContextPropagatingTaskDecorator} run the request's work. Registered with
 * {@code io.micrometer.context.ContextRegistry} through {@code META-INF/services}.
 */
public final class HttpRateLimitContextAccessor implements ThreadLocalAccessor<HttpRateLimitContext> {

    @Override
    public Object key() {
        return InboundCall.CARRIED_SERVLET_CALL;
    }

    @Override
    public HttpRateLimitContext getValue() {
        return HttpRateLimitContext.filtered();
    }

    @Override
    public void setValue(HttpRateLimitContext value) {
        HttpRateLimitContext.CARRIED.set(value);
    }

    @Override
    public void setValue() {
        HttpRateLimitContext.CARRIED.remove();
    }

}
