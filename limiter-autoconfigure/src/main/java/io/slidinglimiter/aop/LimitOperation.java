package io.slidinglimiter.aop;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.slidinglimiter.expression.KeyExpression;

/**
 * One {@code @RateLimited} of a method, with its expressions parsed.
 *
 * @param limitName the limit's name; its current definition is looked up on every call
 * @param key the counter key
 * @param constantCost the cost when it is a number, else 0
 * @param cost the cost expression, or null when the cost is a number
 * @param condition the condition, or null for always
 */
public record LimitOperation(String limitName, KeyExpression key, long constantCost, Expression cost,
        Expression condition) {

    boolean appliesTo(EvaluationContext context) {
        return this.condition == null || Boolean.TRUE.equals(this.condition.getValue(context, Boolean.class));
    }

    /** The cost of one call; null when the expression yields nothing. */
    Long costOf(EvaluationContext context) {
        return (this.cost == null) ? Long.valueOf(this.constantCost) : this.cost.getValue(context, Long.class);
    }

}
