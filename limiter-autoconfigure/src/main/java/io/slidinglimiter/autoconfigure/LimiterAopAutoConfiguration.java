package io.slidinglimiter.autoconfigure;

import java.util.Set;

import java.util.HashMap;
import java.util.Map;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.aop.CallerCapture;
import io.slidinglimiter.aop.RateLimitedAdvisor;
import io.slidinglimiter.aop.RateLimitedInterceptor;
import io.slidinglimiter.aop.RateLimitedMethodsValidator;
import io.slidinglimiter.aop.RateLimitedOperationSource;
import io.slidinglimiter.autoconfigure.LimiterProperties.EmptyKey;
import io.slidinglimiter.call.ChargeSettlement;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.web.ForwardedHeadersCheck;

/**
 * {@code @RateLimited} on bean methods.
 * <p>
 * An infrastructure advisor, the auto-proxy creator that
 * applies it (registered here, as {@code @EnableCaching} does, so it works whatever
 * {@code spring.aop.auto} says and without AspectJ), and a check of every annotated method at
 * start-up.
 * <p>
 * The advisor is created while post-processors are, so it and its interceptor hold no application
 * bean: they look their collaborators up on the first call.
 */
@AutoConfiguration(after = { LimiterAutoConfiguration.class, AopAutoConfiguration.class })
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnBean(RateLimiters.class)
@Import(LimiterAopAutoConfiguration.AutoProxyRegistrar.class)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class LimiterAopAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LimiterExpressionParser limiterExpressionParser(ConfigurableListableBeanFactory beanFactory) {
        return new LimiterExpressionParser(beanFactory, beanFactory.getBeanClassLoader());
    }

    @Bean
    @ConditionalOnMissingBean
    ForwardedHeadersCheck limiterForwardedHeadersCheck(Environment environment,
            ObjectProvider<LimiterExpressionParser> limiterExpressionParser) {
        return new ForwardedHeadersCheck(environment, () -> {
            LimiterExpressionParser parser = limiterExpressionParser.getIfAvailable();
            return (parser != null) ? parser.readingClientAddress() : Set.of();
        });
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static RateLimitedAdvisor rateLimitedAdvisor(ObjectProvider<RateLimitedOperationSource> rateLimitedOperationSource,
            ObjectProvider<RateLimiters> rateLimiters, ObjectProvider<LimiterExpressionParser> limiterExpressionParser,
            ObjectProvider<ChargeSettlement> limiterChargeSettlement, ApplicationContext applicationContext) {
        return new RateLimitedAdvisor(new RateLimitedInterceptor(rateLimitedOperationSource::getObject,
                rateLimiters::getObject, limiterExpressionParser::getObject, limiterChargeSettlement::getObject,
                TransportCalls.of(applicationContext)));
    }

    /**
     * Notes the caller's request on calls that {@code @Async} runs on an executor before they reach
     * the limit, so that their decisions reach that request's headers.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static CallerCapture limiterCallerCapture(ObjectProvider<RateLimitedAdvisor> rateLimitedAdvisor) {
        return new CallerCapture(new CurrentCall(rateLimitedAdvisor));
    }

    @Bean
    RateLimitedOperationSource rateLimitedOperationSource(LimitRegistry limitRegistry, LimiterProperties properties,
            LimiterExpressionParser limiterExpressionParser) {
        Map<String, String> charges = new HashMap<>();
        Map<String, String> plans = new HashMap<>();
        properties.getLimits().forEach((name, limit) -> {
            if (limit.getCharge() != null) {
                charges.put(name, limit.getCharge());
            }
            if (limit.getPlan() != null) {
                plans.put(name, limit.getPlan());
            }
        });
        return new RateLimitedOperationSource(limitRegistry, properties.getLimits().keySet(),
                properties.getDefaultSubWindows(), limiterExpressionParser,
                properties.getEmptyKey() == EmptyKey.ALLOW, charges, plans);
    }

    @Bean
    RateLimitedMethodsValidator rateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory,
            RateLimitedOperationSource rateLimitedOperationSource, ApplicationContext applicationContext,
            ObjectProvider<RateLimitBackend> rateLimitBackend) {
        boolean contextPropagation = ClassUtils.isPresent("io.micrometer.context.ContextRegistry",
                applicationContext.getClassLoader())
                && "auto".equalsIgnoreCase(applicationContext.getEnvironment()
                        .getProperty("spring.reactor.context-propagation", "").trim());
        return new RateLimitedMethodsValidator(beanFactory, rateLimitedOperationSource,
                WebStack.of(applicationContext) == WebStack.REACTIVE, contextPropagation,
                (definition) -> rateLimitBackend.getObject().mayBlock(definition));
    }

    /**
     * Registers Spring's infrastructure auto-proxy creator unless a stronger one is there (Spring
     * Boot's AspectJ one, for example), proxying classes unless
     * {@code spring.aop.proxy-target-class=false}, as Spring Boot does.
     */
    static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

        private Environment environment;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = environment;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            if (this.environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
                AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
            }
        }

    }

}
