package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.expression.Expression;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.slidinglimiter.autoconfigure.LimiterProperties.EmptyKey;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.expression.PlanExpression;
import io.slidinglimiter.web.HttpRule;

/**
 * {@code limiter.http.rules}, compiled once for the servlet filter or the WebFlux filter.
 */
final class HttpRules {

    private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE",
            "OPTIONS", "TRACE");

    private HttpRules() {
    }

    /**
     * The rules of {@code limiter.http.rules}, compiled; fails the start naming each bad entry.
     * @param properties the limiter's properties
     * @param parser parses the rules' keys
     * @return the rules, in order
     */
    static List<HttpRule> of(LimiterProperties properties, LimiterExpressionParser parser) {
        List<HttpRule> rules = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        List<LimiterProperties.Rule> configured = properties.getHttp().getRules();
        for (int i = 0; i < configured.size(); i++) {
            LimiterProperties.Rule rule = configured.get(i);
            String prefix = "limiter.http.rules[" + i + "]";
            int before = problems.size();
            if (rule.getLimit() == null || !properties.getLimits().containsKey(rule.getLimit())) {
                problems.add(new Problem(prefix + ".limit", (rule.getLimit() == null) ? "is missing"
                        : "names '" + rule.getLimit() + "', which is not under limiter.limits",
                        "Set " + prefix + ".limit to one of " + properties.getLimits().keySet()
                                + " or define it under limiter.limits."));
            }
            PathPattern path = null;
            if (rule.getPath() == null || rule.getPath().isBlank()) {
                problems.add(new Problem(prefix + ".path", "is missing", "Set " + prefix
                        + ".path to a path pattern such as /api/**."));
            }
            else {
                try {
                    path = PathPatternParser.defaultInstance.parse(rule.getPath());
                }
                catch (PatternParseException ex) {
                    problems.add(new Problem(prefix + ".path", "'" + rule.getPath() + "' is not a path pattern: "
                            + ex.getMessage(), "Write " + prefix + ".path in Spring PathPattern syntax, such as"
                                    + " /api/** or /users/{id}."));
                }
            }
            Set<String> methods = rule.getMethods().stream().map((method) -> method.trim().toUpperCase(Locale.ROOT))
                    .collect(Collectors.toSet());
            if (!HTTP_METHODS.containsAll(methods)) {
                problems.add(new Problem(prefix + ".methods", "holds an unknown HTTP method: " + rule.getMethods(),
                        "List methods among " + HTTP_METHODS.stream().sorted().toList() + "."));
            }
            KeyExpression key = null;
            try {
                key = new KeyExpression((rule.getKey() == null || rule.getKey().isBlank()) ? null
                        : parser.parse(rule.getKey(), HttpRule.KEY_VARIABLES), prefix,
                        properties.getEmptyKey() == EmptyKey.ALLOW);
            }
            catch (InvalidExpressionException ex) {
                problems.add(new Problem(prefix + ".key", "key expression " + ex.getMessage(),
                        "Write the key over #request, #principal and #clientAddress, for example #clientAddress."));
            }
            Expression charge = null;
            if (rule.getCharge() != null && !rule.getCharge().isBlank()) {
                try {
                    charge = parser.parse(rule.getCharge(), HttpRule.CHARGE_VARIABLES);
                }
                catch (InvalidExpressionException ex) {
                    problems.add(new Problem(prefix + ".charge", "charge expression " + ex.getMessage(),
                            "Write the charge over #status, #response, #request, #principal and #clientAddress,"
                                    + " for example \"#status == 404 ? 1 : 0\"."));
                }
            }
            PlanExpression plan = ConfiguredLimits.plan(properties.getLimits().get(rule.getLimit()), rule.getLimit(), prefix, parser,
                    HttpRule.KEY_VARIABLES, "#request, #principal and #clientAddress", problems);
            if (problems.size() == before) {
                rules.add(new HttpRule(rule.getLimit(), path, methods, key, charge, plan));
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        return rules;
    }

}
