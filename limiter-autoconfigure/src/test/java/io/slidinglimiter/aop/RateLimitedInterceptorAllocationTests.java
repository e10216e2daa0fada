package io.slidinglimiter.aop;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.testsupport.ThreadAllocation;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the interceptor itself allocates for an admitted call outside a web request, counted by the
 * JVM for this thread over 100 000 warmed-up calls, not timed: nothing, for a key that is a
 * {@code String} parameter and a constant cost (Spring AOP's own invocation object and arguments
 * array, made before the interceptor runs, are not counted here). A key that needs evaluating
 * builds its expression variables, one object.
 */
class RateLimitedInterceptorAllocationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class));

    @Test
    void anAdmittedCallWithAParameterKeyAllocatesNothingOfTheInterceptors() {
        this.runner.run((context) -> {
            RateLimitedInterceptor interceptor = interceptor(context);
            Call call = new Call(new Hot(), Hot.class.getMethod("byParameter", String.class), "k");
            assertThat(bytesPerCall(interceptor, call)).isZero();
            assertThat(context.getBean(RateLimiters.class).peek("by-parameter", "k").remaining())
                    .isEqualTo(Hot.LIMIT - ThreadAllocation.TOTAL_CALLS);
        });
    }

    @Test
    void anEvaluatedKeyBuildsOneObjectAtMost() {
        this.runner.run((context) -> {
            RateLimitedInterceptor interceptor = interceptor(context);
            Call call = new Call(new Hot(), Hot.class.getMethod("byExpression", String.class), "k");
            // The call's variables: a header and five references, 40 bytes with compressed pointers.
            assertThat(bytesPerCall(interceptor, call)).isLessThanOrEqualTo(48);
        });
    }

    private static RateLimitedInterceptor interceptor(ApplicationContext context) {
        return (RateLimitedInterceptor) context.getBean(RateLimitedAdvisor.class).getAdvice();
    }

    /** Bytes per call, counted by {@link ThreadAllocation}; an admitted call proceeds to null. */
    private static double bytesPerCall(RateLimitedInterceptor interceptor, Call call) throws Throwable {
        return ThreadAllocation.of(() -> interceptor.invoke(call) == null).bytesPerCall();
    }

    /** One call of an annotated method, made once and handed to the interceptor again and again. */
    private record Call(Object target, Method method, Object... arguments) implements MethodInvocation {

        @Override
        public Method getMethod() {
            return this.method;
        }

        @Override
        public Object[] getArguments() {
            return this.arguments;
        }

        @Override
        public Object proceed() {
            return null;
        }

        @Override
        public Object getThis() {
            return this.target;
        }

        @Override
        public AccessibleObject getStaticPart() {
            return this.method;
        }

    }

    static class Hot {

        static final long LIMIT = 1_000_000_000L;

        @RateLimited(name = "by-parameter", limit = LIMIT, window = "1h", key = "#key")
        public void byParameter(String key) {
        }

        @RateLimited(name = "by-expression", limit = LIMIT, window = "1h", key = "#key.trim()")
        public void byExpression(String key) {
        }

    }

}
