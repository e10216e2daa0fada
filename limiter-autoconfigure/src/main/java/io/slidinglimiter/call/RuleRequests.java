package io.slidinglimiter.call;

import java.util.ArrayList;
import java.util.List;

import org.springframework.expression.EvaluationContext;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.PlanExpression;

/**
 * What the rules that match a call ask, for URL rules or gRPC rules alike.
 * <p>
 * What the rules that match a call ask, for URL rules and gRPC rules alike: one permit of each
 * matching rule's limit, under the call's plan, keyed by that rule; a limit listed by several
 * matching rules is asked once, by the first. Needs nothing of a web stack.
 */
public final class RuleRequests {

    private RuleRequests() {
    }

    /**
     * Adds what one matching rule asks.
     * @param requests the requests so far, or null before the first
     * @param rateLimiters knows the limits
     * @param limitName the rule's limit
     * @param plan the limit's plan expression, or null
     * @param key the rule's key
     * @param context the call's variables
     * @return the requests, one longer when the rule asked a limit not asked before and its key was
     * not empty (an empty key that is rejected throws); null while nothing was asked
     */
    public static List<LimitRequest> add(List<LimitRequest> requests, RateLimiters rateLimiters, String limitName,
            PlanExpression plan, KeyExpression key, EvaluationContext context) {
        LimitDefinition limit = (plan != null) ? rateLimiters.definition(limitName, plan.planOf(context))
                : rateLimiters.definition(limitName);
        String value = key.keyFor(limit, context);
        if (value == null) {
            return requests;
        }
        List<LimitRequest> asked = (requests != null) ? requests : new ArrayList<>(2);
        for (LimitRequest earlier : asked) {
            if (earlier.limit().name().equals(limit.name())) {
                return asked;
            }
        }
        asked.add(new LimitRequest(limit, value, 1));
        return asked;
    }

}
