package io.slidinglimiter.autoconfigure;

import jakarta.servlet.Filter;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.ProblemDetailRejectionHandler;
import io.slidinglimiter.web.RateLimitExceptionResolver;
import io.slidinglimiter.web.RateLimitFilter;
import io.slidinglimiter.web.RateLimitRejectionHandler;

/**
 * Sliding Limiter in a servlet web application.
 * <p>
 * The filter that applies URL rules and writes 429
 * responses, and the resolver that keeps rejections away from application exception handlers.
 */
@AutoConfiguration(after = LimiterAopAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ Filter.class, HandlerExceptionResolver.class })
@ConditionalOnBean({ RateLimiters.class, LimiterExpressionParser.class })
public class LimiterWebAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RateLimitRejectionHandler rateLimitRejectionHandler() {
        return new ProblemDetailRejectionHandler();
    }

    @Bean
    @ConditionalOnMissingBean(name = "rateLimitFilter")
    FilterRegistrationBean<RateLimitFilter> rateLimitFilter(LimiterProperties properties, RateLimiters rateLimiters,
            LimiterExpressionParser limiterExpressionParser, RateLimitRejectionHandler rateLimitRejectionHandler,
            ChargeSettlement limiterChargeSettlement) {
        RateLimitFilter filter = new RateLimitFilter(HttpRules.of(properties, limiterExpressionParser), rateLimiters,
                limiterExpressionParser, rateLimitRejectionHandler, properties.getHttp().isHeaders(),
                limiterChargeSettlement);
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("rateLimitFilter");
        registration.setOrder(properties.getHttp().getFilterOrder());
        return registration;
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitExceptionResolver rateLimitExceptionResolver(RateLimitRejectionHandler rateLimitRejectionHandler) {
        return new RateLimitExceptionResolver(rateLimitRejectionHandler);
    }

}
