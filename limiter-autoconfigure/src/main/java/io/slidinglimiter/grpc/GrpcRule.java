package io.slidinglimiter.grpc;

import java.util.List;

import org.springframework.expression.EvaluationContext;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.RuleRequests;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.PlanExpression;

/**
 * One entry of {@code limiter.grpc.rules}, compiled: a limit applied to the calls of one gRPC method
 * ({@code package.Service/Method}) or of every method of a service ({@code package.Service/*}).
 *
 * @param limitName the limit, under {@code limiter.limits}
 * @param method the full method name, or the service's name followed by {@code /*}
 * @param key the counter key over {@code #metadata} and {@code #clientAddress}
 * @param plan the limit's {@code plan} over the same variables, which chooses the call's quota;
 * null when every call has the limit's own
 */
public record GrpcRule(String limitName, String method, KeyExpression key, PlanExpression plan) {

    /** The suffix of a rule that applies to every method of a service. */
    public static final String ANY_METHOD = "/*";

    /**
     * Whether the rule applies to calls of a method.
     * @param fullMethodName the method's full name, {@code package.Service/Method}
     * @return true if it does
     */
    public boolean matches(String fullMethodName) {
        return matches(this.method, fullMethodName);
    }

    /**
     * Whether a rule's method names a method.
     * @param method a full method name, or a service's name followed by {@code /*}
     * @param fullMethodName a method's full name, {@code package.Service/Method}
     * @return true if it does
     */
    public static boolean matches(String method, String fullMethodName) {
        if (method.endsWith(ANY_METHOD)) {
            int service = method.length() - ANY_METHOD.length();
            return fullMethodName.length() > service + 1 && fullMethodName.regionMatches(0, method, 0, service + 1);
        }
        return method.equals(fullMethodName);
    }

    /**
     * What the rules that match a call ask: one permit of each matching rule's limit (a limit listed
     * by several matching rules is asked once, by the first).
     * @param rules the rules, in order
     * @param fullMethodName the call's method
     * @param rateLimiters knows the limits
     * @param context the call's variables
     * @return the requests, or null when no rule applies
     */
    static List<LimitRequest> requestsFor(List<GrpcRule> rules, String fullMethodName, RateLimiters rateLimiters,
            EvaluationContext context) {
        List<LimitRequest> requests = null;
        for (GrpcRule rule : rules) {
            if (rule.matches(fullMethodName)) {
                requests = RuleRequests.add(requests, rateLimiters, rule.limitName(), rule.plan(), rule.key(), context);
            }
        }
        return requests;
    }

}
