package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.expression.Expression;
import org.springframework.util.function.SingletonSupplier;

import io.slidinglimiter.Decision;
import io.slidinglimiter.InvalidCostException;
import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.CallFinders;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * Applies a method's limits before it runs.
 * <p>
 * Evaluates keys, costs and conditions, decides all
 * limits at once, and throws {@link RateLimitExceededException} when one denies the call.
 */
public final class RateLimitedInterceptor implements MethodInterceptor {

    private static final Log logger = LogFactory.getLog(RateLimitedInterceptor.class);

    private final Supplier<RateLimitedOperationSource> operations;

    private final Supplier<RateLimiters> rateLimiters;

    private final Supplier<LimiterExpressionParser> parser;

    private final Supplier<ChargeSettlement> charges;

    /** How the transports present find the call a method serves. */
    private final CallFinders calls;

    /** The limits whose cost expression failed at least once: their failure was logged. */
    private final Set<String> costFailuresLogged = ConcurrentHashMap.newKeySet();

    /**
     * Creates the interceptor. Its collaborators are asked for on the first call, not before: the
     * advisor is created while post-processors are, and must not pull application beans in then.
     * @param operations the resolved operations
     * @param rateLimiters decides
     * @param parser the parser the operations' expressions came from
     * @param charges settles charged calls once they ended
     * @param calls how the transports present find the call a method serves (only those that can
     * serve one: a servlet application has no WebFlux request, and one that is not a web application
     * has neither)
     */
    public RateLimitedInterceptor(Supplier<RateLimitedOperationSource> operations, Supplier<RateLimiters> rateLimiters,
            Supplier<LimiterExpressionParser> parser, Supplier<ChargeSettlement> charges, CallFinders calls) {
        this.operations = SingletonSupplier.of(operations);
        this.rateLimiters = SingletonSupplier.of(rateLimiters);
        this.parser = SingletonSupplier.of(parser);
        this.charges = SingletonSupplier.of(charges);
        this.calls = calls;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        RateLimitedOperation operation = this.operations.get().operationOfCall(invocation.getMethod(),
                invocation.getThis());
        if (operation == null) {
            return invocation.proceed();
        }
        if (operation.reactive()) {
            Method method = invocation.getMethod();
            Object[] args = invocation.getArguments();
            // A Spring MVC controller returning a Mono: the servlet request it was called in (or the gRPC call).
            InboundCall caller = this.calls.outsideReactor();
            return ReactiveCalls.deferred(invocation, operation.subscribed(),
                    (web, charges) -> requestsOf(operation, method, args, web, charges),
                    RateLimitedInterceptor::settle, this.rateLimiters.get(),
                    operation.charged() ? new ReactiveCalls.Charging(this.charges.get(),
                            (web, result, exception) -> ended(operation, method, args, web, result, exception)) : null,
                    caller, this.calls);
        }
        InboundCall web = currentCall();
        if (web == null) {
            // Run by @Async on an executor: the request the caller served, noted before the hop.
            web = CallerCapture.of(invocation);
        }
        if (operation.charged()) {
            return invokeCharged(invocation, operation, web);
        }
        try {
            enforce(operation, invocation.getMethod(), invocation.getArguments(), web);
        }
        catch (RuntimeException ex) {
            return refused(operation, web, ex);
        }
        return invocation.proceed();
    }

    /**
     * A call the limiter refused (denied, or no decision could be made): the exception is thrown,
     * or, for a method that returns a stage, is that stage's failure, since its caller waits on the
     * stage; the method does not run either way.
     */
    private static Object refused(RateLimitedOperation operation, InboundCall web, RuntimeException ex) {
        if (web != null) {
            web.reject(ex);
        }
        if (operation.denialFailsStage()) {
            return CompletableFuture.failedFuture(ex);
        }
        throw ex;
    }

    /**
     * The request the current thread serves: a servlet request, a WebFlux request where Reactor
     * propagates its context to thread locals, or a gRPC call; null otherwise.
     * @return the request, or null
     */
    public InboundCall currentCall() {
        return this.calls.current();
    }

    /**
     * A call with a charge: admitted against its cost like any other, then settled to its charge
     * when it returns or throws; its own result or exception reaches the caller unchanged.
     */
    private Object invokeCharged(MethodInvocation invocation, RateLimitedOperation operation, InboundCall web)
            throws Throwable {
        Method method = invocation.getMethod();
        Object[] args = invocation.getArguments();
        List<Expression> charges = new ArrayList<>(operation.limits().size());
        List<LimitRequest> requests;
        Decisions taken = null;
        try {
            requests = requestsOf(operation, method, args, web, charges);
            if (!requests.isEmpty()) {
                taken = this.rateLimiters.get().tryAcquireAllToSettle(requests);
                settle(requests, taken, web);
            }
        }
        catch (RuntimeException ex) {
            return refused(operation, web, ex);
        }
        if (taken == null) {
            return invocation.proceed();
        }
        Object result;
        try {
            result = invocation.proceed();
        }
        catch (Throwable ex) {
            this.charges.get().settle(requests, charges, taken, ended(operation, method, args, web, null, ex), web);
            throw ex;
        }
        Decisions admitted = taken;
        if (operation.stage() && result instanceof CompletionStage<?> stage) {
            // Settled with what the stage completes with, before the caller sees it complete (SPEC §3): the
            // caller gets the stage that completes after the settle, with the same value or failure.
            return stage.whenComplete((value, failure) -> this.charges.get().settle(requests, charges, admitted,
                    ended(operation, method, args, web, value, unwrapped(failure)), web));
        }
        this.charges.get().settle(requests, charges, taken, ended(operation, method, args, web, result, null), web);
        return result;
    }

    /** A stage's failure as its work threw it. */
    private static Throwable unwrapped(Throwable failure) {
        return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
    }

    private MethodCallContext ended(RateLimitedOperation operation, Method method, Object[] args, InboundCall web,
            Object result, Throwable exception) {
        return new MethodCallContext(this.parser.get(), method, args, operation.parameterIndex(), web, result,
                exception);
    }

    private void enforce(RateLimitedOperation operation, Method method, Object[] args, InboundCall web) {
        if (operation.limits().size() == 1) {
            LimitOperation limit = operation.limits().get(0);
            // A key read from the arguments, a constant cost, no condition, no plan: nothing to evaluate.
            MethodCallContext context = limit.needsContext() ? context(operation, method, args, web) : null;
            enforce(limit, this.rateLimiters.get(), args, context, web);
            return;
        }
        List<LimitRequest> requests = requestsOf(operation, method, args, web, null);
        if (!requests.isEmpty()) {
            settle(requests, this.rateLimiters.get().tryAcquireAll(requests), web);
        }
    }

    private MethodCallContext context(RateLimitedOperation operation, Method method, Object[] args, InboundCall web) {
        return new MethodCallContext(this.parser.get(), method, args, operation.parameterIndex(), web);
    }

    /**
     * What a call asks: each limit whose condition holds and whose key is not to be skipped; the
     * charge of each request (null where it costs its cost) goes to {@code charges} unless it is null.
     */
    private List<LimitRequest> requestsOf(RateLimitedOperation operation, Method method, Object[] args, InboundCall web,
            List<Expression> charges) {
        MethodCallContext context = context(operation, method, args, web);
        List<LimitRequest> requests = new ArrayList<>(operation.limits().size());
        for (LimitOperation limit : operation.limits()) {
            if (!limit.appliesTo(context)) {
                continue;
            }
            LimitDefinition definition = limit.limit().definition(limit.planOf(context));
            String key = limit.key().keyFor(definition, context);
            if (key == null) {
                continue;
            }
            requests.add(new LimitRequest(definition, key, cost(limit, definition, context)));
            if (charges != null) {
                charges.add(limit.charge());
            }
        }
        return requests;
    }

    /** Records the decisions for the request's headers; throws when they deny the call. */
    private static void settle(List<LimitRequest> requests, Decisions decisions, InboundCall web) {
        if (web != null) {
            web.record(requests, decisions);
        }
        if (!decisions.allowed()) {
            throw RateLimitExceededException.of(requests, decisions);
        }
    }

    /**
     * One limit. Outside a web request nothing needs an admission's numbers, so none is made: only
     * a rejection becomes a Decision, for the exception. The context is null when the limit
     * {@linkplain LimitOperation#needsContext() needs none}.
     */
    private void enforce(LimitOperation limit, RateLimiters rateLimiters, Object[] args, MethodCallContext context,
            InboundCall web) {
        if (!limit.appliesTo(context)) {
            return;
        }
        String plan = limit.planOf(context);
        LimitDefinition definition = limit.limit().definition(plan);
        String key = limit.key().keyFor(definition, args, context);
        if (key == null) {
            return;
        }
        long cost = cost(limit, definition, context);
        if (web == null) {
            Decision rejection = rateLimiters.acquireOrReject(limit.limit(), key, cost, plan);
            // A limit in shadow mode never rejects the call; its decision was counted.
            if (rejection != null && !limit.limit().isShadow()) {
                settle(List.of(new LimitRequest(definition, key, cost)), new Decisions(false, List.of(rejection)),
                        null);
            }
            return;
        }
        Decision decision = rateLimiters.tryAcquire(limit.limit(), key, cost, plan);
        // A limit in shadow mode never rejects the call; its decision is counted, and shown nowhere.
        boolean allowed = decision.allowed() || limit.limit().isShadow();
        settle(List.of(new LimitRequest(definition, key, cost)), new Decisions(allowed, List.of(decision)), web);
    }

    /**
     * The evaluated cost; its bounds are checked once, by the backend that takes it. An expression
     * that fails on this call's data answers the caller without the expression's internals; the
     * cause is logged once per limit, for the developer.
     */
    private long cost(LimitOperation limit, LimitDefinition definition, MethodCallContext context) {
        if (limit.cost() == null) {
            return limit.constantCost();
        }
        Long cost;
        try {
            cost = limit.costOf(context);
        }
        catch (RuntimeException ex) {
            if (this.costFailuresLogged.add(definition.name())) {
                logger.warn("The cost '" + limit.cost().getExpressionString() + "' of limit '" + definition.name()
                        + "' could not be computed for a call (" + ex.getMessage() + "); such calls are refused"
                        + " with InvalidCostException (400 over HTTP). Logged once per limit.");
            }
            throw new InvalidCostException("The cost of limit '" + definition.name()
                    + "' could not be computed from this call's data");
        }
        if (cost == null) {
            throw new InvalidCostException("The cost of limit '" + definition.name() + "' was null; it must be"
                    + " between 1 and " + definition.limit());
        }
        return cost;
    }

}
