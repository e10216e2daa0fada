package io.slidinglimiter.web;

import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * The variables of a URL rule's key: {@code #request}, {@code #principal} and
 * {@code #clientAddress}; see {@link HttpRule#KEY_VARIABLES}.
 */
final class RequestCallContext extends CallEvaluationContext {

    private final WebCall web;

    RequestCallContext(LimiterExpressionParser parser, WebCall web) {
        super(parser);
        this.web = web;
    }

    @Override
    public Object lookupVariable(String name) {
        return WebCall.variable(this.web, name);
    }

}
