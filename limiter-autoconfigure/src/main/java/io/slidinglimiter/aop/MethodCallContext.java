package io.slidinglimiter.aop;

import java.lang.reflect.Method;

import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * The variables of one annotated call.
 * <p>
 * Its parameters by name and position, then {@code #request},
 * {@code #principal}, {@code #clientAddress}, {@code #method} and {@code #args}, and once the call
 * ended, for its charge, {@code #result} and {@code #exception}. A parameter named like one of those
 * wins.
 */
final class MethodCallContext extends CallEvaluationContext {

    private final Method method;

    private final Object[] args;

    private final ParameterIndex parameterIndex;

    private final InboundCall web;

    private final Object result;

    private final Throwable exception;

    MethodCallContext(LimiterExpressionParser parser, Method method, Object[] args,
            ParameterIndex parameterIndex, InboundCall web) {
        this(parser, method, args, parameterIndex, web, null, null);
    }

    /**
     * The variables of a call that ended, for its charge: besides the call's, {@code #result} and
     * {@code #exception}.
     */
    MethodCallContext(LimiterExpressionParser parser, Method method, Object[] args,
            ParameterIndex parameterIndex, InboundCall web, Object result, Throwable exception) {
        super(parser);
        this.method = method;
        this.args = args;
        this.parameterIndex = parameterIndex;
        this.web = web;
        this.result = result;
        this.exception = exception;
    }

    @Override
    public Object lookupVariable(String name) {
        int index = this.parameterIndex.indexOf(name);
        if (index >= 0) {
            return this.args[index];
        }
        return switch (name) {
            case "method" -> this.method;
            case "args" -> this.args;
            case "result" -> this.result;
            case "exception" -> this.exception;
            default -> InboundCall.variable(this.web, name);
        };
    }

}
