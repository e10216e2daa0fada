package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.KotlinDetector;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.web.ChargeSettlement;
import io.slidinglimiter.web.ReactiveDecisions;
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

    /** What Spring AOP needs to run advice around a Kotlin {@code suspend} function. */
    static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt",
            ReactiveCalls.class.getClassLoader());

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
     * Whether a method is a Kotlin {@code suspend} function that Spring AOP runs as a {@code Mono}
     * (with {@code kotlinx-coroutines-reactor} on the class path): its limits are decided when the
     * coroutine runs, as a {@code Mono}'s when subscribed to.
     * @param method a method
     * @return whether it is such a function
     */
    static boolean isSuspending(Method method) {
        return REACTOR_PRESENT && COROUTINES_REACTOR_PRESENT && KotlinDetector.isSuspendingFunction(method);
    }

    /**
     * {@link #isSuspending(Method)} as an application's class loader sees it.
     * @param method a method
     * @param classLoader the application's class loader
     * @return whether it is a suspend function that Spring AOP can advise there
     */
    static boolean isSuspending(Method method, ClassLoader classLoader) {
        return isSuspending(method) && ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", classLoader);
    }

    /**
     * What a call asks, given the request it serves (null outside one); the charge of each request
     * (null where it costs its cost) goes to {@code charges} unless it is null.
     */
    @FunctionalInterface
    interface Requests {

        List<LimitRequest> of(WebCall web, List<Expression> charges);

    }

    /** The variables of a call that ended, for its charge. */
    @FunctionalInterface
    interface Ended {

        EvaluationContext of(WebCall web, Object result, Throwable exception);

    }

    /**
     * How a charged call settles: {@code #result} is the value a {@code Mono} emitted (null when
     * empty), or the number of elements a {@code Flux} emitted.
     * @param settlement evaluates the charges and accounts for the settle
     * @param ended the variables of the call once it ended
     */
    record Charging(ChargeSettlement settlement, Ended ended) {
    }

    /** Records decisions for the request and throws when they deny the call. */
    @FunctionalInterface
    interface Settlement {

        void settle(List<LimitRequest> requests, Decisions decisions, WebCall web);

    }

    /**
     * The method's result, deferred: each subscription first decides the call's limits (without
     * blocking: see {@link ReactiveDecisions}), then runs the method.
     * @param invocation the call
     * @param requests what the call asks
     * @param settlement records the decisions and throws to deny
     * @param rateLimiters decides
     * @param charging how the call settles once it ended, or null when it costs its cost
     * @param caller the servlet request the method was called in (a Spring MVC controller returning a
     * {@code Mono} or {@code Flux}), for a subscription whose context carries no WebFlux request;
     * null outside one
     * @return a {@code Mono} or {@code Flux} like the method's
     */
    static Object deferred(MethodInvocation invocation, Requests requests, Settlement settlement,
            RateLimiters rateLimiters, Charging charging, WebCall caller) {
        if (charging != null) {
            return Reactor.charged((ProxyMethodInvocation) invocation, requests, settlement, rateLimiters, charging,
                    caller);
        }
        return Reactor.deferred((ProxyMethodInvocation) invocation, requests, settlement, rateLimiters, caller);
    }

    /** What needs Reactor's types, apart so that the outer class loads without them. */
    private static final class Reactor {

        static boolean isReactive(Class<?> returnType) {
            return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
        }

        static Object deferred(ProxyMethodInvocation invocation, Requests requests, Settlement settlement,
                RateLimiters rateLimiters, WebCall caller) {
            Mono<Admission> decided = Mono.deferContextual(
                    (context) -> admit(context, caller, requests, null, settlement, rateLimiters));
            if (Flux.class.isAssignableFrom(invocation.getMethod().getReturnType())) {
                return decided.thenMany(Flux.defer(() -> Flux.from(proceed(invocation))));
            }
            return decided.then(Mono.defer(() -> Mono.from(proceed(invocation))));
        }

        /**
         * A charged call: admitted like any other when subscribed to, then settled to its charge when
         * the method's result completes or fails (not when it is cancelled: the call then stays at
         * its cost). The result's signals reach the subscriber unchanged, after the settle.
         */
        static Object charged(ProxyMethodInvocation invocation, Requests requests, Settlement settlement,
                RateLimiters rateLimiters, Charging charging, WebCall caller) {
            boolean flux = Flux.class.isAssignableFrom(invocation.getMethod().getReturnType());
            Flux<Object> calls = Flux.deferContextual((context) -> {
                List<Expression> chargeOf = new ArrayList<>();
                return admit(context, caller, requests, chargeOf, settlement, rateLimiters).flatMapMany((admission) -> {
                    if (admission.taken() == null) {
                        return Flux.from(proceed(invocation));
                    }
                    return settledWhenDone(Flux.from(proceed(invocation)), flux, (result, exception) -> ReactiveDecisions
                            .settle(rateLimiters, charging.settlement(), admission.asked(), chargeOf, admission.taken(),
                                    charging.ended().of(admission.web(), result, exception), admission.web()));
                });
            });
            return flux ? calls : calls.singleOrEmpty();
        }

        /**
         * Decides what one subscription asks, in the request it serves: fails with the rejection (a
         * denial, a key or cost that cannot be taken) after marking the request rejected.
         * @param chargeOf receives each request's charge, or null when the call is not charged
         * @return the admission; with no decisions when no limit applied to the call
         */
        private static Mono<Admission> admit(ContextView context, WebCall caller, Requests requests,
                List<Expression> chargeOf, Settlement settlement, RateLimiters rateLimiters) {
            WebCall reactive = WEBFLUX_PRESENT ? ReactiveRateLimitContext.of(context) : null;
            WebCall web = (reactive != null) ? reactive : caller;
            List<LimitRequest> asked;
            try {
                asked = requests.of(web, chargeOf);
            }
            catch (RuntimeException ex) {
                return rejected(web, ex);
            }
            if (asked.isEmpty()) {
                return Mono.just(new Admission(web, asked, null));
            }
            return ReactiveDecisions.decide(rateLimiters, asked).flatMap((taken) -> {
                try {
                    settlement.settle(asked, taken, web);
                }
                catch (RuntimeException ex) {
                    return rejected(web, ex);
                }
                return Mono.just(new Admission(web, asked, taken));
            });
        }

        /** What a subscription was admitted for: its request (or null), what it asked, the decisions. */
        private record Admission(WebCall web, List<LimitRequest> asked, Decisions taken) {
        }

        /**
         * The method's elements, then the settle of its charge before the completion or the error
         * reaches the subscriber. A {@code Mono}'s charge sees the value it emitted; a {@code Flux}'s
         * sees how many elements it emitted.
         */
        private static Flux<Object> settledWhenDone(Flux<Object> result, boolean flux,
                BiFunction<Object, Throwable, Mono<Void>> settle) {
            return Flux.defer(() -> {
                long[] emitted = { 0 };
                Object[] last = { null };
                Flux<Object> counted = result.doOnNext((element) -> {
                    emitted[0]++;
                    last[0] = element;
                });
                return counted
                        .onErrorResume((error) -> settle.apply(flux ? emitted[0] : last[0], error).then(Mono.error(error)))
                        .concatWith(Mono.defer(() -> settle.apply(flux ? emitted[0] : last[0], null)).then(Mono.empty()));
            });
        }

        /** A denial (or a key or cost that cannot be taken): the request is marked rejected, the subscriber fails. */
        private static <T> Mono<T> rejected(WebCall web, RuntimeException ex) {
            if (web != null) {
                web.reject(ex);
            }
            return Mono.error(ex);
        }

        /** Runs the method once for a subscription (a copy of the invocation each time). */
        @SuppressWarnings("unchecked")
        private static Publisher<Object> proceed(ProxyMethodInvocation invocation) {
            try {
                Object result = invocation.invocableClone().proceed();
                return (result != null) ? (Publisher<Object>) result : Mono.empty();
            }
            catch (Throwable ex) {
                return Mono.error(ex);
            }
        }

    }

}
