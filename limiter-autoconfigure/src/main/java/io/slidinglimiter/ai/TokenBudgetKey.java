package io.slidinglimiter.ai;

import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.expression.CallEvaluationContext;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.HttpRateLimitContext;
import io.slidinglimiter.web.ReactiveRateLimitContext;
import io.slidinglimiter.web.WebCall;

/**
 * A token budget's key from {@code limiter.ai.token-budget.key}: SpEL over {@code #context} (the
 * advisor context of the {@code ChatClient} call) and {@code #principal} (the signed-in user of the
 * web request the call serves: with Spring Security, its {@code Authentication}; null outside a
 * request), parsed once at start.
 */
public final class TokenBudgetKey implements Function<Map<String, Object>, Object> {

    /** The variables the key sees. */
    public static final Set<String> VARIABLES = Set.of("context", "principal");

    private static final boolean SERVLET = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
            TokenBudgetKey.class.getClassLoader());

    private static final boolean REACTIVE = ClassUtils.isPresent(
            "org.springframework.http.server.reactive.ServerHttpRequest", TokenBudgetKey.class.getClassLoader())
            && ClassUtils.isPresent("reactor.core.publisher.Mono", TokenBudgetKey.class.getClassLoader());

    private final LimiterExpressionParser parser;

    private final Expression expression;

    /**
     * @param parser parsed the expression, and resolves its bean references
     * @param expression the key, over {@link #VARIABLES}
     */
    public TokenBudgetKey(LimiterExpressionParser parser, Expression expression) {
        this.parser = parser;
        this.expression = expression;
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

    /** The principal of the web request this thread serves (with Spring Security, its authentication); null outside one. */
    private static Object principal() {
        WebCall web = SERVLET ? HttpRateLimitContext.current() : null;
        if (web == null && REACTIVE) {
            web = ReactiveRateLimitContext.current();
        }
        return (web != null) ? web.principal() : null;
    }

}
