package io.slidinglimiter.expression;

import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.core.LimitDefinition;

/**
 * A limit's counter key: a parsed expression, or one key shared by every call when there is none,
 * with what to do when it comes out empty ({@code limiter.empty-key}): never a shared "null" key.
 * An expression that throws counts as empty; its failure is logged once.
 */
public final class KeyExpression {

    /** The key of a limit without a key expression: one counter for all calls. */
    public static final String SHARED_KEY = "*";

    private static final Log logger = LogFactory.getLog(KeyExpression.class);

    private final Expression expression;

    private final String where;

    private final boolean allowEmpty;

    /** The position of the String parameter that is the whole expression ({@code #userId}), or -1. */
    private final int parameter;

    private final AtomicBoolean failureLogged = new AtomicBoolean();

    /**
     * Creates a key.
     * @param expression the parsed expression, or null for one shared key
     * @param where what declared it, for the log
     * @param allowEmpty whether a call with an empty key bypasses the limit; else it is denied
     */
    public KeyExpression(Expression expression, String where, boolean allowEmpty) {
        this(expression, where, allowEmpty, -1);
    }

    private KeyExpression(Expression expression, String where, boolean allowEmpty, int parameter) {
        this.expression = expression;
        this.where = where;
        this.allowEmpty = allowEmpty;
        this.parameter = parameter;
    }

    /**
     * A key that is one of a method's {@code String} parameters and nothing more ({@code #userId},
     * {@code #p0}): read from the call's arguments, as the expression would give it, with no
     * evaluation context and no evaluation.
     * @param expression the parsed expression, for its text
     * @param parameter the parameter's position
     * @param where what declared it, for the log
     * @param allowEmpty whether a call with an empty key bypasses the limit; else it is denied
     * @return the key
     */
    public static KeyExpression ofParameter(Expression expression, int parameter, String where, boolean allowEmpty) {
        return new KeyExpression(expression, where, allowEmpty, parameter);
    }

    /**
     * Whether the key is evaluated in the call's context: not when it is one key shared by every
     * call, nor when it is a {@linkplain #ofParameter parameter}, read from the call's arguments by
     * {@link #keyFor(LimitDefinition, Object[], EvaluationContext)}.
     * @return false when no context is needed
     */
    public boolean needsContext() {
        return this.expression != null && this.parameter < 0;
    }

    /**
     * The key of one call to {@code limit}.
     * @param limit the limit the key is for
     * @param context the call's variables
     * @return the key; null when it is empty and empty keys bypass the limit
     * @throws RateLimitExceededException when it is empty and empty keys are rejected
     */
    public String keyFor(LimitDefinition limit, EvaluationContext context) {
        return nonEmpty(limit, evaluate(context));
    }

    /**
     * The key of one call to {@code limit}, read from its arguments when the key is a parameter.
     * @param limit the limit the key is for
     * @param args the call's arguments
     * @param context the call's variables; may be null when the key {@linkplain #needsContext() needs none}
     * @return the key; null when it is empty and empty keys bypass the limit
     * @throws RateLimitExceededException when it is empty and empty keys are rejected
     */
    public String keyFor(LimitDefinition limit, Object[] args, EvaluationContext context) {
        if (this.parameter < 0) {
            return keyFor(limit, context);
        }
        String key = (String) args[this.parameter];
        return nonEmpty(limit, (key == null || key.isBlank()) ? null : key);
    }

    /** The key; null, when empty keys bypass the limit, for an empty one. */
    private String nonEmpty(LimitDefinition limit, String key) {
        if (key == null && !this.allowEmpty) {
            throw RateLimitExceededException.forMissingKey(limit, (this.expression != null)
                    ? "the key expression " + this.expression.getExpressionString() : "the key");
        }
        return key;
    }

    /** A String as it is (no look-up of a converter on the call path); other values converted as SpEL would. */
    static String asString(Object value, EvaluationContext context) {
        if (value == null || value instanceof String) {
            return (String) value;
        }
        return (String) context.getTypeConverter().convertValue(value, TypeDescriptor.forObject(value),
                TypeDescriptor.valueOf(String.class));
    }

    /** The key, or null when the expression yields null or blank, or fails (logged once). */
    private String evaluate(EvaluationContext context) {
        if (this.expression == null) {
            return SHARED_KEY;
        }
        try {
            String key = asString(this.expression.getValue(context), context);
            return (key == null || key.isBlank()) ? null : key;
        }
        catch (RuntimeException ex) {
            // SpEL rethrows what a called method throws as it is, not as an EvaluationException.
            if (this.failureLogged.compareAndSet(false, true)) {
                logger.warn("Key expression '" + this.expression.getExpressionString() + "' of " + this.where
                        + " failed and is treated as an empty key (limiter.empty-key applies); use ?. for values"
                        + " that may be null. Logged once.", ex);
            }
            return null;
        }
    }

}
