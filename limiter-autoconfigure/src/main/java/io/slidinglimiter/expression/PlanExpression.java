package io.slidinglimiter.expression;

import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * A limit's {@code plan}: the expression that names each call's plan, which chooses the quota the
 * call is compared with ({@code limiter.limits.<name>.plans.<plan>.limit}). A null or blank plan,
 * a plan the limit does not have, or an expression that fails (logged once) gives the limit's own
 * quota: a caller is never refused for its plan.
 */
public final class PlanExpression {

    private static final Log logger = LogFactory.getLog(PlanExpression.class);

    private final Expression expression;

    private final String where;

    private final AtomicBoolean failureLogged = new AtomicBoolean();

    /**
     * Creates a plan.
     * @param expression the parsed expression
     * @param where what declared it, for the log
     */
    public PlanExpression(Expression expression, String where) {
        this.expression = expression;
        this.where = where;
    }

    /**
     * The plan one call is on.
     * @param context the call's variables
     * @return the plan's name, or null when the expression gives none or fails
     */
    public String planOf(EvaluationContext context) {
        try {
            return KeyExpression.asString(this.expression.getValue(context), context);
        }
        catch (RuntimeException ex) {
            // SpEL rethrows what a called method throws as it is, not as an EvaluationException.
            if (this.failureLogged.compareAndSet(false, true)) {
                logger.warn("Plan expression '" + this.expression.getExpressionString() + "' of " + this.where
                        + " failed, so the limit's own quota applies to such calls; use ?. for values that may be"
                        + " null. Logged once.", ex);
            }
            return null;
        }
    }

}
