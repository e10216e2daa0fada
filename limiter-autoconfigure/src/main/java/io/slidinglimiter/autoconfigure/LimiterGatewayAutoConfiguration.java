package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.gateway.SlidingWindowRateLimiter;

/**
 * Spring Cloud Gateway (WebFlux server): the {@code slidingWindowRateLimiter} bean, for routes'
 * {@code RequestRateLimiter} filters. Configured after the gateway's Redis rate limiter and before
 * the gateway's filter factories: when the application has another {@link RateLimiter} (the
 * gateway's own {@code RedisRateLimiter}), that one stays the filter's default and this one is used
 * only where a route names it; when it has none, this one is the default.
 */
@AutoConfiguration(after = LimiterAutoConfiguration.class,
        afterName = "org.springframework.cloud.gateway.config.GatewayRedisAutoConfiguration",
        before = GatewayAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(RateLimiter.class)
@ConditionalOnBean(RateLimiters.class)
public class LimiterGatewayAutoConfiguration {

    /** The bean's name, which routes use: {@code "#{@slidingWindowRateLimiter}"}. */
    public static final String BEAN_NAME = "slidingWindowRateLimiter";

    /** Beside the application's own rate limiter: used only where a route names it. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(AnotherRateLimiterCondition.class)
    static class BesideAnotherRateLimiter {

        @Bean(name = BEAN_NAME, defaultCandidate = false)
        SlidingWindowRateLimiter slidingWindowRateLimiter(RateLimiters rateLimiters, LimiterProperties properties) {
            return create(rateLimiters, properties);
        }

    }

    /** The only rate limiter: the filter's default. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(value = RateLimiter.class, ignored = SlidingWindowRateLimiter.class)
    static class AsTheOnlyRateLimiter {

        @Bean(BEAN_NAME)
        SlidingWindowRateLimiter slidingWindowRateLimiter(RateLimiters rateLimiters, LimiterProperties properties) {
            return create(rateLimiters, properties);
        }

    }

    /**
     * Fails the start for a route defined in properties whose {@code RequestRateLimiter} filter uses
     * this rate limiter (by name, or as the filter's default) while no limit is defined for it: its
     * every request would fail. Routes built in Java are checked at their first request.
     */
    @Bean
    static SmartInitializingSingleton limiterGatewayRouteCheck(ObjectProvider<GatewayProperties> gateway,
            ObjectProvider<RequestRateLimiterGatewayFilterFactory> filters, ObjectProvider<RateLimiters> rateLimiters,
            ObjectProvider<LimiterProperties> properties) {
        return () -> {
            GatewayProperties routes = gateway.getIfAvailable();
            RequestRateLimiterGatewayFilterFactory filter = filters.getIfAvailable();
            if (routes == null || filter == null) {
                return;
            }
            boolean theDefault = filter.getDefaultRateLimiter() instanceof SlidingWindowRateLimiter;
            Map<String, String> limitsByRoute = properties.getObject().getGateway().getRoutes();
            List<Problem> problems = new ArrayList<>();
            List<RouteDefinition> definitions = routes.getRoutes();
            for (int i = 0; i < definitions.size(); i++) {
                RouteDefinition route = definitions.get(i);
                if (route.getFilters().stream().noneMatch((definition) -> usesThis(definition, theDefault))) {
                    continue;
                }
                String limit = limitsByRoute.getOrDefault(route.getId(), route.getId());
                if (!ConfiguredLimits.isDefined(rateLimiters.getObject(), limit)) {
                    problems.add(new Problem(GatewayProperties.PREFIX + ".routes[" + i + "] (id '" + route.getId()
                            + "')", "is limited by " + BEAN_NAME + " through RequestRateLimiter, but no limit '"
                                    + limit + "' is defined, so every request on the route would fail",
                            "Define limiter.limits." + limit + " (limit and window), or name a defined limit in"
                                    + " limiter.gateway.routes." + route.getId() + "."));
                }
            }
            if (!problems.isEmpty()) {
                throw new InvalidLimiterConfigurationException(problems);
            }
        };
    }

    /** Whether a route's filter is {@code RequestRateLimiter} deciding by this rate limiter. */
    private static boolean usesThis(FilterDefinition definition, boolean theDefault) {
        if (!"RequestRateLimiter".equals(definition.getName())) {
            return false;
        }
        String rateLimiter = definition.getArgs().entrySet().stream()
                .filter((arg) -> arg.getKey().replace("-", "").equalsIgnoreCase("rateLimiter"))
                .map(Map.Entry::getValue).findFirst().orElse(null);
        return (rateLimiter != null) ? rateLimiter.contains("@" + BEAN_NAME) : theDefault;
    }

    /** Matches when the application has a rate limiter other than this one. */
    static class AnotherRateLimiterCondition extends NoneNestedConditions {

        AnotherRateLimiterCondition() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnMissingBean(value = RateLimiter.class, ignored = SlidingWindowRateLimiter.class)
        static class NoOtherRateLimiter {

        }

    }

    private static SlidingWindowRateLimiter create(RateLimiters rateLimiters, LimiterProperties properties) {
        Map<String, String> routes = properties.getGateway().getRoutes();
        List<Problem> problems = new ArrayList<>();
        routes.forEach((route, limit) -> {
            if (!ConfiguredLimits.isDefined(rateLimiters, limit)) {
                problems.add(new Problem("limiter.gateway.routes." + route, "names '" + limit
                        + "', which is not under limiter.limits", "Define limiter.limits." + limit
                                + ", or name one of the limits that are defined."));
            }
        });
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        return new SlidingWindowRateLimiter(rateLimiters, routes);
    }

}
