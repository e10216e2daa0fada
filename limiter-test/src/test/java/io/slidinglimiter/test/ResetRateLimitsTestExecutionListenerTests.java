package io.slidinglimiter.test;

import java.lang.reflect.Method;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.test.annotation.DirtiesContext.HierarchyMode;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;
import org.springframework.test.context.support.DependencyInjectionTestExecutionListener;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener alone: registered for Spring's test framework, after dependency injection; resets
 * only for annotated classes, and does nothing where there is no limiter.
 */
class ResetRateLimitsTestExecutionListenerTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class))
            .withPropertyValues("limiter.limits.a.limit=1", "limiter.limits.a.window=1m");

    @Test
    void springsTestFrameworkFindsItAfterDependencyInjection() {
        // Spring's own servlet listener cannot load here, with no servlet API: skip what cannot.
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(TestExecutionListener.class,
                (factoryType, factoryName, failure) -> {
                }))
                .hasAtLeastOneElementOfType(ResetRateLimitsTestExecutionListener.class);
        assertThat(new ResetRateLimitsTestExecutionListener().getOrder())
                .isGreaterThan(new DependencyInjectionTestExecutionListener().getOrder());
    }

    @Test
    void onlyAnAnnotatedClassIsReset() {
        this.runner.run((context) -> {
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            rateLimiters.tryAcquire("a", "k");
            new ResetRateLimitsTestExecutionListener().beforeTestMethod(testContext(context, NotAnnotated.class));
            assertThat(rateLimiters.peek("a", "k").remaining()).isZero();
            new ResetRateLimitsTestExecutionListener().beforeTestMethod(testContext(context, Annotated.class));
            assertThat(rateLimiters.peek("a", "k").remaining()).isOne();
            rateLimiters.tryAcquire("a", "k");
            new ResetRateLimitsTestExecutionListener().beforeTestMethod(testContext(context, Annotated.Nested.class));
            assertThat(rateLimiters.peek("a", "k").remaining()).as("in a class nested in an annotated one").isOne();
        });
    }

    @Test
    void aContextWithoutALimiterIsLeftAlone() {
        new ApplicationContextRunner().run((context) -> new ResetRateLimitsTestExecutionListener()
                .beforeTestMethod(testContext(context, Annotated.class)));
    }

    private static TestContext testContext(ApplicationContext context, Class<?> testClass) {
        return new TestContext() {

            @Override
            public boolean hasApplicationContext() {
                return true;
            }

            @Override
            public ApplicationContext getApplicationContext() {
                return context;
            }

            @Override
            public void publishEvent(Function<TestContext, ? extends ApplicationEvent> eventFactory) {
            }

            @Override
            public Class<?> getTestClass() {
                return testClass;
            }

            @Override
            public Object getTestInstance() {
                return null;
            }

            @Override
            public Method getTestMethod() {
                return null;
            }

            @Override
            public Throwable getTestException() {
                return null;
            }

            @Override
            public void markApplicationContextDirty(HierarchyMode hierarchyMode) {
            }

            @Override
            public void updateState(Object testInstance, Method testMethod, Throwable testException) {
            }

            @Override
            public void setAttribute(String name, Object value) {
            }

            @Override
            public Object getAttribute(String name) {
                return null;
            }

            @Override
            public Object removeAttribute(String name) {
                return null;
            }

            @Override
            public boolean hasAttribute(String name) {
                return false;
            }

            @Override
            public String[] attributeNames() {
                return new String[0];
            }

        };
    }

    static class NotAnnotated {

    }

    @ResetRateLimits
    static class Annotated {

        class Nested {

        }

    }

}
