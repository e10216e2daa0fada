package io.slidinglimiter.test;

import org.springframework.context.ApplicationContext;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;

import io.slidinglimiter.RateLimiters;

/**
 * Resets every rate-limit count before each test method of a class annotated with
 * {@link ResetRateLimits}. Registered in {@code META-INF/spring.factories}; it runs after
 * dependency injection, so the application context exists, and does nothing in a context without
 * a {@code RateLimiters} bean.
 */
public class ResetRateLimitsTestExecutionListener extends AbstractTestExecutionListener {

    /** After Spring's own listeners that prepare the test instance (dependency injection is 2000). */
    public static final int ORDER = 2500;

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public void beforeTestMethod(TestContext testContext) {
        if (!TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), ResetRateLimits.class)) {
            return;
        }
        ApplicationContext context = testContext.getApplicationContext();
        context.getBeanProvider(RateLimiters.class).ifAvailable(RateLimiters::resetAll);
    }

}
