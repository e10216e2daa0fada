package io.slidinglimiter.autoconfigure;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.aop.RateLimitedAdvisor;
import io.slidinglimiter.aop.RateLimitedInterceptor;
import io.slidinglimiter.aop.RateLimitedMethodsValidator;
import io.slidinglimiter.aop.RateLimitedOperationSource;
import io.slidinglimiter.autoconfigure.LimiterProperties.EmptyKey;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.expression.LimiterExpressionParser;

/**
 * {@code @RateLimited} on bean methods: an infrastructure advisor picked up by Spring Boot's
 * auto-proxy creator, and a check of every annotated method at start-up.
 */
@AutoConfiguration(after = { LimiterAutoConfiguration.class, AopAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimiters.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class LimiterAopAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    LimiterExpressionParser limiterExpressionParser(ConfigurableListableBeanFactory beanFactory) {
        return new LimiterExpressionParser(beanFactory, beanFactory.getBeanClassLoader());
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitedOperationSource rateLimitedOperationSource(LimitRegistry limitRegistry, LimiterProperties properties,
            LimiterExpressionParser limiterExpressionParser) {
        return new RateLimitedOperationSource(limitRegistry, properties.getLimits().keySet(),
                properties.getDefaultSubWindows(), limiterExpressionParser,
                properties.getEmptyKey() == EmptyKey.ALLOW);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitedAdvisor rateLimitedAdvisor(RateLimitedOperationSource rateLimitedOperationSource,
            RateLimiters rateLimiters, LimiterExpressionParser limiterExpressionParser) {
        return new RateLimitedAdvisor(rateLimitedOperationSource, new RateLimitedInterceptor(
                rateLimitedOperationSource, rateLimiters, limiterExpressionParser));
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    RateLimitedMethodsValidator rateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory,
            RateLimitedOperationSource rateLimitedOperationSource) {
        return new RateLimitedMethodsValidator(beanFactory, rateLimitedOperationSource);
    }

}
