package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.HttpRateLimitContext;

/**
 * Applies a method's limits before it runs: evaluates keys, costs and conditions, decides all
 * limits at once, and throws {@link RateLimitExceededException} when one denies the call.
 */
public final class RateLimitedInterceptor implements MethodInterceptor {

    private static final boolean WEB_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
            RateLimitedInterceptor.class.getClassLoader())
            && ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder",
                    RateLimitedInterceptor.class.getClassLoader());

    private final RateLimitedOperationSource operations;

    private final RateLimiters rateLimiters;

    private final LimiterExpressionParser parser;

    /**
     * Creates the interceptor.
     * @param operations the resolved operations
     * @param rateLimiters decides
     * @param parser the parser the operations' expressions came from
     */
    public RateLimitedInterceptor(RateLimitedOperationSource operations, RateLimiters rateLimiters,
            LimiterExpressionParser parser) {
        this.operations = operations;
        this.rateLimiters = rateLimiters;
        this.parser = parser;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
        RateLimitedOperation operation = this.operations.operationFor(invocation.getMethod(), targetClass);
        if (operation != null) {
            enforce(operation, invocation.getMethod(), invocation.getArguments());
        }
        return invocation.proceed();
    }

    private void enforce(RateLimitedOperation operation, Method method, Object[] args) {
        HttpRateLimitContext web = WEB_PRESENT ? HttpRateLimitContext.current() : null;
        MethodCallContext context = new MethodCallContext(this.parser, method, args, operation.parameterIndex(),
                (web != null) ? web.request() : null, (web != null) ? web.principal() : null);
        List<LimitRequest> requests = new ArrayList<>(operation.limits().size());
        for (LimitOperation limit : operation.limits()) {
            if (!limit.appliesTo(context)) {
                continue;
            }
            LimitDefinition definition = this.rateLimiters.definition(limit.limitName());
            String key = limit.key().keyFor(definition, context);
            if (key == null) {
                continue;
            }
            requests.add(new LimitRequest(definition, key, cost(limit, definition, context)));
        }
        if (requests.isEmpty()) {
            return;
        }
        Decisions decisions = this.rateLimiters.tryAcquireAll(requests);
        if (web != null) {
            web.record(requests, decisions);
        }
        if (!decisions.allowed()) {
            throw RateLimitExceededException.of(requests, decisions);
        }
    }

    private static long cost(LimitOperation limit, LimitDefinition definition, MethodCallContext context) {
        Long cost;
        try {
            cost = limit.costOf(context);
        }
        catch (RuntimeException ex) {
            throw new InvalidCostException("The cost of limit '" + definition.name() + "' could not be computed: "
                    + ex.getMessage());
        }
        if (cost == null || cost < 1 || cost > definition.limit()) {
            throw new InvalidCostException("The cost of limit '" + definition.name() + "' was " + cost
                    + "; it must be between 1 and " + definition.limit());
        }
        return cost;
    }

}
