package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.server.mvc.config.FilterProperties;
import org.springframework.cloud.gateway.server.mvc.config.GatewayMvcProperties;
import org.springframework.cloud.gateway.server.mvc.config.RouteProperties;
import org.springframework.cloud.gateway.server.mvc.filter.FilterSupplier;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.gateway.mvc.LimiterFilterFunctions;
import io.slidinglimiter.web.HttpRule;

/**
 * Spring Cloud Gateway Server MVC.
 * <p>
 * The {@code RateLimit} filter
 * ({@link LimiterFilterFunctions}) for routes in properties, and a start that never leaves a route
 * silently unlimited: a {@code RateLimit} filter naming an undefined limit fails it, and a route
 * whose id is a limit's name but which has no {@code RateLimit} filter is logged with both ways to
 * apply the limit.
 */
@AutoConfiguration(after = LimiterAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass({ FilterSupplier.class, GatewayMvcProperties.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnBean(RateLimiters.class)
public class LimiterGatewayMvcAutoConfiguration {

    private static final Log logger = LogFactory.getLog(LimiterGatewayMvcAutoConfiguration.class);

    /** The filter's name in routes' properties. */
    static final String FILTER = "RateLimit";

    @Bean
    LimiterFilterFunctions.FilterSupplier limiterFilterFunctionsSupplier() {
        return new LimiterFilterFunctions.FilterSupplier();
    }

    @Bean
    static SmartInitializingSingleton limiterGatewayMvcRouteCheck(ObjectProvider<GatewayMvcProperties> gateway,
            ObjectProvider<RateLimiters> rateLimiters, ObjectProvider<LimiterExpressionParser> parser) {
        return () -> {
            GatewayMvcProperties properties = gateway.getIfAvailable();
            if (properties == null) {
                return;
            }
            List<Problem> problems = new ArrayList<>();
            List<RouteProperties> routes = new ArrayList<>(properties.getRoutes());
            routes.addAll(properties.getRoutesMap().values());
            for (RouteProperties route : routes) {
                check(route, rateLimiters.getObject(), parser.getObject(), problems);
            }
            if (!problems.isEmpty()) {
                throw new InvalidLimiterConfigurationException(problems);
            }
        };
    }

    private static void check(RouteProperties route, RateLimiters rateLimiters, LimiterExpressionParser parser,
            List<Problem> problems) {
        String subject = GatewayMvcProperties.PREFIX + ".routes (id '" + route.getId() + "')";
        boolean limited = false;
        for (FilterProperties filter : route.getFilters()) {
            if (!FILTER.equalsIgnoreCase(filter.getName())) {
                continue;
            }
            limited = true;
            String[] limitAndKey = limitAndKey(filter.getArgs());
            String limit = limitAndKey[0];
            if (limit == null || !ConfiguredLimits.isDefined(rateLimiters, limit)) {
                problems.add(new Problem(subject, "has a RateLimit filter " + ((limit == null) ? "without a limit"
                        : "naming '" + limit + "', which is not under limiter.limits")
                        + ", so no request on the route could be decided",
                        "Define limiter.limits." + ((limit != null) ? limit : route.getId())
                                + " (limit and window), and give the filter its name: RateLimit=<limit>,<key>, or"
                                + " args: {limit: ..., key: ...}."));
            }
            String key = limitAndKey[1];
            if (key != null) {
                try {
                    parser.parse(key, HttpRule.KEY_VARIABLES);
                }
                catch (InvalidExpressionException ex) {
                    problems.add(new Problem(subject, "has a RateLimit filter whose key " + ex.getMessage(),
                            "Fix the key expression: it sees #request (the route's ServerRequest), #clientAddress"
                                    + " and #principal."));
                }
            }
        }
        if (!limited && route.getId() != null && ConfiguredLimits.isDefined(rateLimiters, route.getId())) {
            logger.warn("Route '" + route.getId() + "' of the gateway has the name of limit '" + route.getId()
                    + "' but no RateLimit filter, so the limit does not apply to it. Add the filter to the route"
                    + " (filters: [{name: RateLimit, args: {limit: " + route.getId() + ", key: \"#clientAddress\"}}]),"
                    + " or use LimiterFilterFunctions.rateLimit(\"" + route.getId() + "\", ...) in a Java route.");
        }
    }

    /**
     * The filter's limit and key: its {@code limit} and {@code key} arguments, or in the shortcut
     * form ({@code RateLimit=<limit>,<key>}) its first value and the rest.
     */
    private static String[] limitAndKey(Map<String, String> args) {
        if (args.containsKey("limit") || args.containsKey("key")) {
            return new String[] { argument(args, "limit"), argument(args, "key") };
        }
        return LimiterFilterFunctions.shortcut(String.join(",", args.values()));
    }

    private static String argument(Map<String, String> args, String name) {
        String value = args.get(name);
        return (value == null || value.isBlank()) ? null : value;
    }

}
