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

import kotlinx.coroutines.flow.Flow;
import kotlinx.coroutines.reactive.ReactiveFlowKt;
import kotlinx.coroutines.reactor.ReactorFlowKt;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.CallFinders;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.call.ReactiveDecisions;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * Limits on methods whose result is subscribed to: {@code Mono}, {@code Flux}, {@code suspend}, {@code Flow}.
 * <p>
 * Limits on methods that return a {@code Mono} or a {@code Flux}, Kotlin {@code suspend} functions
 * and functions returning a {@code Flow}: decided when the result is subscribed to (the coroutine
 * runs, the {@code Flow} is collected), once per subscription, so that a result built and never
 * subscribed to consumes nothing; the method itself runs only once admitted. In a WebFlux request
 * the call sees the request's variables from the Reactor context, and a denial marks the request
 * rejected, so that the filter answers 429 whatever the application's exception handlers do.
 * Loaded only when Reactor is on the class path.
 */
final class ReactiveCalls {

    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
            ReactiveCalls.class.getClassLoader());

    private static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";

    /**
     * What Spring AOP needs to run advice around a Kotlin {@code suspend} function, and this class
     * to adapt a {@code Flow}.
     */
    private static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent(COROUTINES_REACTOR,
            ReactiveCalls.class.getClassLoader());

    private ReactiveCalls() {
    }

    /** How a method's result is subscribed to, when its limits are decided on subscription. */
    enum Subscribed {

        /** A {@code Mono}, or a Kotlin {@code suspend} function's value: {@code #result} is the value. */
        ONE,

        /**
         * A {@code Flux}, or a {@code suspend} function returning a {@code Flow} (which Spring AOP
         * runs as a {@code Flux}): {@code #result} is the number of elements.
         */
        MANY,

        /**
         * A Kotlin {@code Flow} returned by a plain function: decided when collected, once per
         * collection, the count of its values as {@code #result}; the method gets a {@code Flow} back.
         */
        FLOW

    }

    /**
     * How a method's limits are decided on subscription, or null when they are decided when it is
     * called: a {@code Mono} or {@code Flux}, a Kotlin {@code suspend} function that Spring AOP runs
     * as one (with {@code kotlinx-coroutines-reactor}), or a Kotlin {@code Flow} (the same dependency).
     * @param method a method
     * @return how its result is subscribed to, or null
     */
    static Subscribed subscribed(Method method) {
        if (!REACTOR_PRESENT) {
            return null;
        }
        if (COROUTINES_REACTOR_PRESENT && KotlinDetector.isSuspendingFunction(method)) {
            return Coroutines.isFlow(new MethodParameter(method, -1).getParameterType()) ? Subscribed.MANY
                    : Subscribed.ONE;
        }
        Subscribed reactive = Reactor.subscribed(method.getReturnType());
        if (reactive != null) {
            return reactive;
        }
        return (COROUTINES_REACTOR_PRESENT && Coroutines.isFlow(method.getReturnType())) ? Subscribed.FLOW : null;
    }

    /**
     * {@link #subscribed(Method)} as an application's class loader sees it: a Kotlin function needs
     * {@code kotlinx-coroutines-reactor} there too.
     * @param method a method
     * @param classLoader the application's class loader
     * @return how its result is subscribed to, or null when its limits are decided when it is called
     */
    static Subscribed subscribed(Method method, ClassLoader classLoader) {
        Subscribed subscribed = subscribed(method);
        boolean kotlin = subscribed == Subscribed.FLOW || KotlinDetector.isSuspendingFunction(method);
        return (subscribed == null || !kotlin || ClassUtils.isPresent(COROUTINES_REACTOR, classLoader)) ? subscribed
                : null;
    }

    /**
     * What a call asks, given the request it serves (null outside one); the charge of each request
     * (null where it costs its cost) goes to {@code charges} unless it is null.
     */
    @FunctionalInterface
    interface Requests {

        List<LimitRequest> of(InboundCall web, List<Expression> charges);

    }

    /** The variables of a call that ended, for its charge. */
    @FunctionalInterface
    interface Ended {

        EvaluationContext of(InboundCall web, Object result, Throwable exception);

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

        void settle(List<LimitRequest> requests, Decisions decisions, InboundCall web);

    }

    /**
     * The method's result, deferred: each subscription first decides the call's limits (without
     * blocking: see {@link ReactiveDecisions}), then runs the method.
     * @param invocation the call
     * @param subscribed how the method's result is subscribed to
     * @param requests what the call asks
     * @param settlement records the decisions and throws to deny
     * @param rateLimiters decides
     * @param charging how the call settles once it ended, or null when it costs its cost
     * @param caller the servlet request the method was called in (a Spring MVC controller returning a
     * {@code Mono} or {@code Flux}), for a subscription whose context carries no WebFlux request;
     * null outside one
     * @param calls how the transports present find the call a subscription's context carries
     * @return a {@code Mono}, {@code Flux} or {@code Flow} like the method's
     */
    static Object deferred(MethodInvocation invocation, Subscribed subscribed, Requests requests,
            Settlement settlement, RateLimiters rateLimiters, Charging charging, InboundCall caller,
            CallFinders calls) {
        ProxyMethodInvocation call = (ProxyMethodInvocation) invocation;
        Object result = (charging != null)
                ? Reactor.charged(call, subscribed, requests, settlement, rateLimiters, charging, caller, calls)
                : Reactor.deferred(call, subscribed, requests, settlement, rateLimiters, caller, calls);
        return (subscribed == Subscribed.FLOW) ? Coroutines.asFlow(result) : result;
    }

    /**
     * What needs Kotlin's coroutine types, apart so that the outer class loads without them: a
     * {@code Flow} runs as a {@code Flux} between the method and its caller. Collecting the
     * {@code Flow} subscribes to the {@code Flux}, with the Reactor context of the coroutine that
     * collects (kotlinx-coroutines-reactor carries it), so that a WebFlux request reaches the key.
     */
    private static final class Coroutines {

        static boolean isFlow(Class<?> type) {
            return Flow.class.isAssignableFrom(type);
        }

        @SuppressWarnings("unchecked")
        static Object asFlow(Object flux) {
            return ReactiveFlowKt.asFlow((Publisher<Object>) flux);
        }

        @SuppressWarnings("unchecked")
        static Publisher<Object> asFlux(Object flow) {
            return ReactorFlowKt.asFlux((Flow<Object>) flow);
        }

    }

    /** What needs Reactor's types, apart so that the outer class loads without them. */
    private static final class Reactor {

        static Subscribed subscribed(Class<?> returnType) {
            if (Mono.class.isAssignableFrom(returnType)) {
                return Subscribed.ONE;
            }
            return Flux.class.isAssignableFrom(returnType) ? Subscribed.MANY : null;
        }

        static Object deferred(ProxyMethodInvocation invocation, Subscribed subscribed, Requests requests,
                Settlement settlement, RateLimiters rateLimiters, InboundCall caller, CallFinders calls) {
            Mono<Admission> decided = Mono.deferContextual(
                    (context) -> admit(context, caller, calls, requests, null, settlement, rateLimiters));
            if (subscribed != Subscribed.ONE) {
                return decided.thenMany(Flux.defer(() -> Flux.from(proceed(invocation, subscribed))));
            }
            return decided.then(Mono.defer(() -> Mono.from(proceed(invocation, subscribed))));
        }

        /**
         * A charged call: admitted like any other when subscribed to, then settled to its charge when
         * the method's result completes or fails (not when it is cancelled: the call then stays at
         * its cost). The result's signals reach the subscriber unchanged, after the settle.
         */
        static Object charged(ProxyMethodInvocation invocation, Subscribed subscribed, Requests requests,
                Settlement settlement, RateLimiters rateLimiters, Charging charging, InboundCall caller,
                CallFinders finders) {
            boolean flux = subscribed != Subscribed.ONE;
            Flux<Object> calls = Flux.deferContextual((context) -> {
                List<Expression> chargeOf = new ArrayList<>();
                return admit(context, caller, finders, requests, chargeOf, settlement, rateLimiters).flatMapMany((admission) -> {
                    if (admission.taken() == null) {
                        return Flux.from(proceed(invocation, subscribed));
                    }
                    return settledWhenDone(Flux.from(proceed(invocation, subscribed)), flux, (result, exception) -> ReactiveDecisions
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
        private static Mono<Admission> admit(ContextView context, InboundCall caller, CallFinders calls,
                Requests requests, List<Expression> chargeOf, Settlement settlement, RateLimiters rateLimiters) {
            InboundCall reactive = calls.inContext(context);
            // Else a servlet request's call: the one the method was called in, or the one the context carries.
            InboundCall web = (reactive != null) ? reactive : (caller != null) ? caller : carried(context);
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

        /** The servlet request's call that Spring MVC wrote into a handler result's context, or null. */
        private static InboundCall carried(ContextView context) {
            return (context.getOrDefault(InboundCall.CARRIED_SERVLET_CALL, null) instanceof InboundCall web) ? web : null;
        }

        /** What a subscription was admitted for: its request (or null), what it asked, the decisions. */
        private record Admission(InboundCall web, List<LimitRequest> asked, Decisions taken) {
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
        private static <T> Mono<T> rejected(InboundCall web, RuntimeException ex) {
            if (web != null) {
                web.reject(ex);
            }
            return Mono.error(ex);
        }

        /**
         * Runs the method once for a subscription (a copy of the invocation each time); a
         * {@code Flow} it returns is collected as the subscription asks for its values.
         */
        @SuppressWarnings("unchecked")
        private static Publisher<Object> proceed(ProxyMethodInvocation invocation, Subscribed subscribed) {
            try {
                Object result = invocation.invocableClone().proceed();
                if (result == null) {
                    return Mono.empty();
                }
                return (subscribed == Subscribed.FLOW) ? Coroutines.asFlux(result) : (Publisher<Object>) result;
            }
            catch (Throwable ex) {
                return Mono.error(ex);
            }
        }

    }

}
