package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
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
            try {
                rateLimiters.definition(limit);
            }
            catch (IllegalArgumentException ex) {
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
