package io.slidinglimiter.autoconfigure;

import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.WebFilter;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.ReactiveRateLimitFilter;

/**
 * Sliding Limiter in a reactive (WebFlux) web application.
 * <p>
 * The {@code WebFilter} that applies URL
 * rules, gives annotated methods returning {@code Mono} or {@code Flux} the request they serve, and
 * writes 429 responses.
 */
@AutoConfiguration(after = LimiterAopAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ WebFilter.class, Mono.class })
@ConditionalOnBean({ RateLimiters.class, LimiterExpressionParser.class })
public class LimiterReactiveWebAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ReactiveRateLimitFilter reactiveRateLimitFilter(LimiterProperties properties, RateLimiters rateLimiters,
            LimiterExpressionParser limiterExpressionParser, ChargeSettlement limiterChargeSettlement) {
        return new ReactiveRateLimitFilter(HttpRules.of(properties, limiterExpressionParser), rateLimiters,
                limiterExpressionParser, properties.getHttp().isHeaders(), properties.getHttp().getFilterOrder(),
                limiterChargeSettlement);
    }

}
