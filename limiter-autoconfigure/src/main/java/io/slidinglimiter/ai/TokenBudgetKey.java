package io.slidinglimiter.ai;

import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.expression.Expression;

import io.slidinglimiter.call.InboundCall;
import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * A token budget's key from {@code limiter.ai.token-budget.key}.
 * <p>
 * SpEL over {@code #context} (the
 * advisor context of the {@code ChatClient} call) and {@code #principal} (the signed-in user of the
 * web request the call serves: with Spring Security, its {@code Authentication}; null outside a
 * request), parsed once at start.
 */
public final class TokenBudgetKey implements Function<Map<String, Object>, Object> {

    /** The variables the key sees. */
    public static final Set<String> VARIABLES = Set.of("context", "principal");

    private final LimiterExpressionParser parser;

    private final Expression expression;

    /** The request the current thread serves, found as the limits of annotated methods find it. */
    private final Supplier<InboundCall> currentCall;

    /**
     * @param parser parsed the expression, and resolves its bean references
     * @param expression the key, over {@link #VARIABLES}
     * @param currentCall the request the current thread serves, or null outside one
     */
    public TokenBudgetKey(LimiterExpressionParser parser, Expression expression, Supplier<InboundCall> currentCall) {
        this.parser = parser;
        this.expression = expression;
        this.currentCall = currentCall;
    }

    @Override
    public Object apply(Map<String, Object> context) {
        return this.expression.getValue(new CallEvaluationContext(this.parser) {

            @Override
            public Object lookupVariable(String name) {
                return switch (name) {
                    case "context" -> context;
                    case "principal" -> principal();
                    default -> null;
                };
            }

        });
    }

    /** @return the expression's text, for messages */
    public String source() {
        return this.expression.getExpressionString();
    }

    /** The principal of the request this thread serves (with Spring Security, its authentication); null outside one. */
    private Object principal() {
        InboundCall web = this.currentCall.get();
        return (web != null) ? web.principal() : null;
    }

}
