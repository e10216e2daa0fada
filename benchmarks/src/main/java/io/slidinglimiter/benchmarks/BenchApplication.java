package io.slidinglimiter.benchmarks;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;

/**
 * The smallest application with the starter: one service with an annotated method.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class BenchApplication {

    /**
     * Leaves the starter's timer and observation out of every decision although Actuator is on the
     * benchmarks' class path: what the benchmarks measured before the round "With Actuator" of
     * BENCHMARKS.md ({@code LocalBenchmarks} with {@code -p meters=...} measures them on).
     */
    static final String WITHOUT_METRICS = "spring.autoconfigure.exclude="
            + "io.slidinglimiter.autoconfigure.LimiterMetricsAutoConfiguration,"
            + "io.slidinglimiter.autoconfigure.LimiterObservationAutoConfiguration";

    @Bean
    BenchService benchService() {
        return new BenchService();
    }

    /** A Spring advice that does nothing, on {@link NoopAdvised} methods: Spring AOP's own cost. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor noopAdvisor() {
        return new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, NoopAdvised.class),
                (MethodInterceptor) MethodInvocation::proceed);
    }

}
