package io.slidinglimiter.aop;

import java.util.function.Consumer;

import org.aopalliance.intercept.MethodInvocation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.web.ReactiveRateLimitContext;
import io.slidinglimiter.web.WebCall;

/**
 * Limits on methods that return a {@code Mono} or a {@code Flux}: decided when the result is
 * subscribed to, once per subscription, so that a result built and never subscribed to consumes
 * nothing; the method itself runs only once admitted. In a WebFlux request the call sees the
 * request's variables from the Reactor context, and a denial marks the request rejected, so that
 * the filter answers 429 whatever the application's exception handlers do. Loaded only when Reactor
 * is on the class path.
 */
final class ReactiveCalls {

    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            ReactiveCalls.class.getClassLoader());

    private static final boolean WEBFLUX_PRESENT = ClassUtils.isPresent(
            "org.springframework.web.server.ServerWebExchange", ReactiveCalls.class.getClassLoader());

    private ReactiveCalls() {
    }

    /**
     * Whether a method's result is a {@code Mono} or a {@code Flux}.
     * @param returnType the method's return type
     * @return whether its limits are decided on subscription
     */
    static boolean isReactive(Class<?> returnType) {
        return REACTOR_PRESENT && Reactor.isReactive(returnType);
    }

    /**
     * The method's result, deferred: each subscription first runs {@code enforce} (which throws to
     * deny), then the method.
     * @param invocation the call
     * @param enforce decides the call's limits with the request it serves (null outside one)
     * @param mayBlock whether deciding may wait for I/O, so that it runs off the event loop
     * @return a {@code Mono} or {@code Flux} like the method's
     */
    static Object deferred(MethodInvocation invocation, Consumer<WebCall> enforce, boolean mayBlock) {
        return Reactor.deferred((ProxyMethodInvocation) invocation, enforce, mayBlock);
    }

    /** What needs Reactor's types, apart so that the outer class loads without them. */
    private static final class Reactor {

        static boolean isReactive(Class<?> returnType) {
            return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
        }

        static Object deferred(ProxyMethodInvocation invocation, Consumer<WebCall> enforce, boolean mayBlock) {
            Mono<Object> decided = Mono.deferContextual((context) -> {
                ReactiveRateLimitContext web = WEBFLUX_PRESENT ? ReactiveRateLimitContext.of(context) : null;
                try {
                    enforce.accept(web);
                }
                catch (RuntimeException ex) {
                    if (web != null) {
                        web.reject(ex);
                    }
                    return Mono.error(ex);
                }
                return Mono.empty();
            });
            if (mayBlock) {
                decided = decided.subscribeOn(Schedulers.boundedElastic());
            }
            if (Flux.class.isAssignableFrom(invocation.getMethod().getReturnType())) {
                return decided.thenMany(Flux.defer(() -> Flux.from(proceed(invocation))));
            }
            return decided.then(Mono.defer(() -> Mono.from(proceed(invocation))));
        }

        /** Runs the method once for a subscription (a copy of the invocation each time). */
        @SuppressWarnings("unchecked")
        private static org.reactivestreams.Publisher<Object> proceed(ProxyMethodInvocation invocation) {
            try {
                Object result = invocation.invocableClone().proceed();
                return (result != null) ? (org.reactivestreams.Publisher<Object>) result : Mono.empty();
            }
            catch (Throwable ex) {
                return Mono.error(ex);
            }
        }

    }

}
