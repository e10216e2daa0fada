package io.slidinglimiter.web;

import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * The variables of a URL rule's key: {@code #request}, {@code #principal} and
 * {@code #clientAddress}; see {@link HttpRule#KEY_VARIABLES}. Once the response is known, for the
 * rule's charge, {@code #status} and {@code #response} too.
 */
final class RequestCallContext extends CallEvaluationContext {

    private final WebCall web;

    private final Integer status;

    private final Object response;

    RequestCallContext(LimiterExpressionParser parser, WebCall web) {
        this(parser, web, null, null);
    }

    RequestCallContext(LimiterExpressionParser parser, WebCall web, Integer status, Object response) {
        super(parser);
        this.web = web;
        this.status = status;
        this.response = response;
    }

    @Override
    public Object lookupVariable(String name) {
        return switch (name) {
            case "status" -> this.status;
            case "response" -> this.response;
            default -> WebCall.variable(this.web, name);
        };
    }

}
