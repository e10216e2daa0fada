package io.slidinglimiter.aop;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.Async;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.autoconfigure.LimiterAopAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * A limit applies however the application proxies beans, or the start fails naming the method
 * that could not be advised: never a limit that silently does nothing.
 */
class RateLimitedProxyingTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class));

    /** As in an application without spring-boot-starter-aspectj. */
    private final ApplicationContextRunner withoutAspectJ = this.runner
            .withClassLoader(new FilteredClassLoader("org.aspectj"));

    @Test
    void limitsApplyWithSpringAopAutoOff() {
        this.withoutAspectJ.withPropertyValues("spring.aop.auto=false").withUserConfiguration(ClassBased.class)
                .run((context) -> assertLimited(context.getBean(Greeter.class)::greet));
    }

    @Test
    void limitsApplyThroughJdkProxiesWithTheAnnotationOnTheImplementation() {
        this.withoutAspectJ.withPropertyValues("spring.aop.proxy-target-class=false")
                .withUserConfiguration(InterfaceBased.class).run((context) -> {
                    Greeting greeting = context.getBean(Greeting.class);
                    assertThat(greeting.getClass().getName()).contains("$Proxy");
                    assertLimited(greeting::greet);
                });
    }

    @Test
    void limitsApplyWithAspectJAndEveryAopSetting() {
        this.runner.withPropertyValues("spring.aop.proxy-target-class=false").withUserConfiguration(InterfaceBased.class)
                .run((context) -> assertLimited(context.getBean(Greeting.class)::greet));
        this.runner.withPropertyValues("spring.aop.auto=false").withUserConfiguration(ClassBased.class)
                .run((context) -> assertLimited(context.getBean(Greeter.class)::greet));
    }

    @Test
    void aFinalMethodFailsTheStart() {
        assertFailure(FinalMethod.class, (message) -> assertThat(message)
                .contains("@RateLimited on " + FinalGreeter.class.getName() + ".greet()")
                .contains("the method is final"));
    }

    @Test
    void aPrivateMethodFailsTheStart() {
        assertFailure(PrivateMethod.class, (message) -> assertThat(message)
                .contains("@RateLimited on " + PrivateGreeter.class.getName() + ".greet()")
                .contains("the method is private"));
    }

    @Test
    void aMethodMissingFromTheJdkProxysInterfacesFailsTheStart() {
        this.withoutAspectJ.withPropertyValues("spring.aop.proxy-target-class=false")
                .withUserConfiguration(NotOnTheInterface.class).run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(analysis(context.getStartupFailure()).getDescription())
                            .contains(WiderGreeting.class.getName() + ".shout()")
                            .contains("the method is on none of its interfaces");
                });
    }

    @Test
    void anAsyncMethodThatReturnsNothingFailsTheStart() {
        assertFailure(AsyncMethod.class, (message) -> assertThat(message)
                .contains("@RateLimited on " + AsyncGreeter.class.getName() + ".greet()")
                .contains("the method is @Async and returns nothing its caller waits on"));
    }

    @Test
    void aTypeLevelLimitLeavesToStringEqualsAndHashCodeAlone() {
        this.runner.withUserConfiguration(TypeLevel.class).run((context) -> {
            Limited limited = context.getBean(Limited.class);
            for (int i = 0; i < 5; i++) {
                assertThat(limited.toString()).isEqualTo("limited");
                assertThatNoException().isThrownBy(limited::hashCode);
                assertThat(limited.equals(limited)).isTrue();
            }
            Map<Limited, String> map = new HashMap<>();
            map.put(limited, "in a map");
            assertLimited(limited::work);
        });
    }

    @Test
    void overloadsGetDefaultNamesOfTheirOwn() {
        this.runner.withUserConfiguration(Overloads.class).run((context) -> {
            Overloaded overloaded = context.getBean(Overloaded.class);
            overloaded.o("a");
            assertThatNoException().isThrownBy(() -> overloaded.o(1));
            RateLimitExceededException denied = assertLimitedAgain(() -> overloaded.o("b"));
            assertThat(denied.getLimitName()).isEqualTo("Overloaded.o(String)");
            assertThat(assertLimitedAgain(() -> overloaded.o(2)).getLimitName()).isEqualTo("Overloaded.o(int)");
        });
    }

    @Test
    void theSuggestedPropertyForADottedDefaultNameBindsWhenCopied() {
        this.runner.withUserConfiguration(NoLimit.class).run((context) -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getAction()).contains("Define limiter.limits[NoLimitBean.m].limit and .window");
        });
        this.runner.withUserConfiguration(NoLimit.class)
                .withPropertyValues("limiter.limits[NoLimitBean.m].limit=1", "limiter.limits[NoLimitBean.m].window=1m")
                .run((context) -> assertLimited(context.getBean(NoLimitBean.class)::m));
    }

    @Test
    void anUnknownPropertyUnderLimiterFailsTheStart() {
        this.runner.withPropertyValues("limiter.limits.login.limit=5", "limiter.limits.login.windw=1m")
                .run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("limiter.limits.login.windw");
                });
        this.runner.withPropertyValues("limiter.defualt-sub-windows=12")
                .run((context) -> assertThat(context).hasFailed());
    }

    private static void assertLimited(Runnable call) {
        call.run();
        assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(call::run);
    }

    /** The call was made once already; the next one is denied. */
    private static RateLimitExceededException assertLimitedAgain(Runnable call) {
        try {
            call.run();
        }
        catch (RateLimitExceededException ex) {
            return ex;
        }
        try {
            call.run();
        }
        catch (RateLimitExceededException ex) {
            return ex;
        }
        throw new AssertionError("Not limited");
    }

    private void assertFailure(Class<?> configuration, Consumer<String> assertions) {
        FailureAnalysisAccess.assertStartFails(this.runner.withUserConfiguration(configuration), assertions);
    }

    private static FailureAnalysis analysis(Throwable failure) {
        return FailureAnalysisAccess.of(failure);
    }


    public interface Greeting {

        String greet();

    }

    public static class Greeter implements Greeting {

        @Override
        @RateLimited(limit = 1, window = "1m")
        public String greet() {
            return "hello";
        }

    }

    public static class WiderGreeting extends Greeter {

        @RateLimited(limit = 1, window = "1m")
        public String shout() {
            return "HELLO";
        }

    }

    public static class FinalGreeter {

        @RateLimited(limit = 1, window = "1m")
        public final String greet() {
            return "hello";
        }

    }

    public static class PrivateGreeter {

        @RateLimited(limit = 1, window = "1m")
        private String greet() {
            return "hello";
        }

    }

    public static class AsyncGreeter {

        @Async
        @RateLimited(limit = 1, window = "1m")
        public void greet() {
        }

    }

    @RateLimited(limit = 1, window = "1m")
    public static class Limited {

        public void work() {
        }

        @Override
        public String toString() {
            return "limited";
        }

        @Override
        public int hashCode() {
            return 42;
        }

        @Override
        public boolean equals(Object other) {
            return other == this;
        }

    }

    public static class Overloaded {

        @RateLimited(limit = 1, window = "1m")
        public void o(String text) {
        }

        @RateLimited(limit = 1, window = "1m")
        public void o(int number) {
        }

    }

    public static class NoLimitBean {

        @RateLimited
        public void m() {
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class ClassBased {

        @Bean
        Greeter greeter() {
            return new Greeter();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class InterfaceBased {

        @Bean
        Greeting greeting() {
            return new Greeter();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class NotOnTheInterface {

        @Bean
        WiderGreeting widerGreeting() {
            return new WiderGreeting();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class FinalMethod {

        @Bean
        FinalGreeter finalGreeter() {
            return new FinalGreeter();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class PrivateMethod {

        @Bean
        PrivateGreeter privateGreeter() {
            return new PrivateGreeter();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class AsyncMethod {

        @Bean
        AsyncGreeter asyncGreeter() {
            return new AsyncGreeter();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class TypeLevel {

        @Bean
        Limited limited() {
            return new Limited();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class Overloads {

        @Bean
        Overloaded overloaded() {
            return new Overloaded();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class NoLimit {

        @Bean
        NoLimitBean noLimitBean() {
            return new NoLimitBean();
        }

    }

}
