package io.slidinglimiter.web;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.RuleRequests;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.PlanExpression;

/**
 * A {@code limiter.http.rules} entry, compiled.
 * <p>
 * The limit to apply to requests whose path matches
 * and whose method is listed (or any, when none is). A rule for GET covers HEAD too, since Spring
 * MVC answers HEAD with the GET handler.
 *
 * @param limitName the limit's name, under {@code limiter.limits}
 * @param path the path pattern
 * @param methods upper-case HTTP methods; empty for all
 * @param key the counter key over {@code #request}, {@code #principal} and {@code #clientAddress}
 * @param charge what a request finally costs, evaluated after the response with {@code #status} and
 * {@code #response} besides the key's variables; null for one permit
 * @param plan the limit's {@code plan} over the key's variables, which chooses the request's quota;
 * null when every request has the limit's own
 */
public record HttpRule(String limitName, PathPattern path, Set<String> methods, KeyExpression key,
        Expression charge, PlanExpression plan) {

    /** The variables a rule's key may use. */
    public static final Set<String> KEY_VARIABLES = Set.of("request", "principal", "clientAddress");

    /** The variables a rule's charge may use. */
    public static final Set<String> CHARGE_VARIABLES = Set.of("request", "principal", "clientAddress", "status",
            "response");

    public HttpRule {
        if (methods.contains("GET") && !methods.contains("HEAD")) {
            methods = new HashSet<>(methods);
            methods.add("HEAD");
        }
        methods = Set.copyOf(methods);
    }

    boolean matches(String method, PathContainer path) {
        return (this.methods.isEmpty() || this.methods.contains(method)) && this.path.matches(path);
    }

    /**
     * What the rules that match a request ask: one permit of each matching rule's limit (a limit
     * listed by several matching rules is asked once, by the first), keyed by that rule.
     * @param rules the rules, in order
     * @param method the request's method
     * @param path the request's path within the application
     * @param rateLimiters knows the limits
     * @param variables the request's variables for keys, made on first use
     * @param charges receives the charge of each request (null for one permit)
     * @return the requests, or null when no rule applies
     */
    static List<LimitRequest> requestsFor(List<HttpRule> rules, String method, PathContainer path,
            RateLimiters rateLimiters, Supplier<EvaluationContext> variables, List<Expression> charges) {
        List<LimitRequest> requests = null;
        EvaluationContext context = null;
        for (HttpRule rule : rules) {
            if (!rule.matches(method, path)) {
                continue;
            }
            context = (context != null) ? context : variables.get();
            int asked = (requests != null) ? requests.size() : 0;
            requests = RuleRequests.add(requests, rateLimiters, rule.limitName(), rule.plan(), rule.key(), context);
            if (requests != null && requests.size() > asked) {
                charges.add(rule.charge());
            }
        }
        return requests;
    }

}
