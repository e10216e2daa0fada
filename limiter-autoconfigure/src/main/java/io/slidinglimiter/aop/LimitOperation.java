package io.slidinglimiter.aop;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.PlanExpression;

/**
 * One {@code @RateLimited} of a method, with its expressions parsed.
 *
 * @param limit the registered limit, resolved once; its current definition applies on every call
 * @param key the counter key
 * @param constantCost the cost when it is a number, else 0
 * @param cost the cost expression, or null when the cost is a number
 * @param condition the condition, or null for always
 * @param charge what the call finally costs, evaluated when it ends; null when it costs its cost
 * @param plan the caller's plan, which chooses the quota; null when every call has the limit's own
 */
record LimitOperation(LimitRegistry.Handle limit, KeyExpression key, long constantCost, Expression cost,
        Expression condition, Expression charge, PlanExpression plan) {

    /** @return the limit's name */
    public String limitName() {
        return this.limit.definition().name();
    }

    /** The caller's plan; null when the limit's own quota applies. */
    String planOf(EvaluationContext context) {
        return (this.plan == null) ? null : this.plan.planOf(context);
    }

    /**
     * Whether a call's variables are needed: not when the key is shared or a parameter, the cost a
     * number, and there is neither a condition nor a plan.
     */
    boolean needsContext() {
        return this.key.needsContext() || this.cost != null || this.condition != null || this.plan != null;
    }

    boolean appliesTo(EvaluationContext context) {
        return this.condition == null || Boolean.TRUE.equals(this.condition.getValue(context, Boolean.class));
    }

    /** The cost of one call; null when the expression yields nothing. */
    Long costOf(EvaluationContext context) {
        return (this.cost == null) ? Long.valueOf(this.constantCost) : this.cost.getValue(context, Long.class);
    }

}
