package io.slidinglimiter.web;

import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * The variables of a URL rule's key: {@code #request} and {@code #principal}; see
 * {@link HttpRule#KEY_VARIABLES}.
 */
final class RequestCallContext extends CallEvaluationContext {

    private final HttpRateLimitContext web;

    RequestCallContext(LimiterExpressionParser parser, HttpRateLimitContext web) {
        super(parser);
        this.web = web;
    }

    @Override
    public Object lookupVariable(String name) {
        return switch (name) {
            case "request" -> this.web.request();
            case "principal" -> this.web.principal();
            default -> null;
        };
    }

}
