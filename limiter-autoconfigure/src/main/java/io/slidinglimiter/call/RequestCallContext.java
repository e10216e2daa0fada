package io.slidinglimiter.call;

import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * The variables of a rule's key over the call it matched: {@code #request}, {@code #principal},
 * {@code #clientAddress}.
 * <p>
 * Once the response is known, for the rule's charge, {@code #status} and {@code #response} too.
 */
public final class RequestCallContext extends CallEvaluationContext {

    private final InboundCall web;

    private final Integer status;

    private final Object response;

    /**
     * The variables of a key.
     * @param parser the parser the key came from
     * @param web the call, or null outside one
     */
    public RequestCallContext(LimiterExpressionParser parser, InboundCall web) {
        this(parser, web, null, null);
    }

    /**
     * The variables of a charge, once the response is known.
     * @param parser the parser the charge came from
     * @param web the call, or null outside one
     * @param status the response's status
     * @param response the response
     */
    public RequestCallContext(LimiterExpressionParser parser, InboundCall web, Integer status, Object response) {
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
            default -> InboundCall.variable(this.web, name);
        };
    }

}
