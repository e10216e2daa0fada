package io.slidinglimiter.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.HandlerExceptionResolver;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.aop.RateLimitedAdvisor;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.web.ProblemDetailRejectionHandler;
import io.slidinglimiter.web.RateLimitExceptionResolver;
import io.slidinglimiter.web.RateLimitRejectionHandler;

import static org.assertj.core.api.Assertions.assertThat;

class LimiterAutoConfigurationTests {

    static final AutoConfigurations LIMITER = AutoConfigurations.of(AopAutoConfiguration.class,
            LimiterAutoConfiguration.class, LimiterAopAutoConfiguration.class, LimiterWebAutoConfiguration.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(LIMITER);

    private final WebApplicationContextRunner webRunner = new WebApplicationContextRunner().withConfiguration(LIMITER);

    @Test
    void wiresTheLocalBackendAndTheAdvisorByDefault() {
        this.runner.run((context) -> {
            assertThat(context).hasSingleBean(RateLimiters.class);
            assertThat(context).hasSingleBean(LimitRegistry.class);
            assertThat(context).getBean(RateLimitBackend.class).isInstanceOf(LocalBackend.class);
            assertThat(context).getBean(TimeSource.class).isSameAs(TimeSource.ticking());
            assertThat(context).hasSingleBean(RateLimitedAdvisor.class);
            assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
            assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class);
        });
    }

    /** A backend an application (or a module) contributes by name is one limits can choose. */
    @Test
    void aLimitCountsInTheBackendItNames() {
        LocalBackend own = new LocalBackend(TimeSource.monotonic(), 100);
        this.runner.withBean("ownBackend", io.slidinglimiter.core.NamedBackend.class,
                () -> new io.slidinglimiter.core.NamedBackend("own", own))
                .withPropertyValues("limiter.limits.mine.limit=3", "limiter.limits.mine.window=1m",
                        "limiter.limits.mine.backend=own", "limiter.limits.other.limit=3",
                        "limiter.limits.other.window=1m")
                .run((context) -> {
                    RateLimiters limiters = context.getBean(RateLimiters.class);
                    limiters.tryAcquire("mine", "k");
                    limiters.tryAcquire("other", "k");
                    assertThat(own.peek(limiters.definition("mine"), "k").remaining()).isEqualTo(2);
                    assertThat(own.peek(limiters.definition("other"), "k").remaining()).as("other stays local")
                            .isEqualTo(3);
                    assertThat(limiters.usage("other", "k").used()).isEqualTo(1);
                });
    }

    /** The ticking clock's thread runs while a backend uses the clock: closing the context ends that use. */
    @Test
    void closingTheContextClosesTheBackendsUseOfTheClock() {
        java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();
        TimeSource counting = new TimeSource() {

            @Override
            public long currentTimeMillis() {
                return 1_700_000_000_000L;
            }

            @Override
            public Registration register() {
                open.incrementAndGet();
                return open::decrementAndGet;
            }

        };
        this.runner.withBean(TimeSource.class, () -> counting).run((context) -> {
            assertThat(open).as("the local backend uses the clock").hasValue(1);
            context.close();
            assertThat(open).hasValue(0);
        });
    }

    @Test
    void disabledWiresNothing() {
        this.webRunner.withPropertyValues("limiter.enabled=false").run((context) -> {
            assertThat(context).doesNotHaveBean(RateLimiters.class);
            assertThat(context).doesNotHaveBean(RateLimitBackend.class);
            assertThat(context).doesNotHaveBean(RateLimitedAdvisor.class);
            assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
            assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class);
            assertThat(context).doesNotHaveBean(LimiterProperties.class);
        });
    }

    @Test
    void aServletApplicationGetsTheFilterTheResolverAndTheProblemDetailHandler() {
        this.webRunner.run((context) -> {
            assertThat(context).hasSingleBean(FilterRegistrationBean.class);
            assertThat(context).getBean("rateLimitFilter", FilterRegistrationBean.class)
                    .extracting(FilterRegistrationBean::getOrder).isEqualTo(-90);
            assertThat(context).hasSingleBean(RateLimitExceptionResolver.class);
            assertThat(context).getBean(RateLimitRejectionHandler.class)
                    .isInstanceOf(ProblemDetailRejectionHandler.class);
        });
    }

    @Test
    void withoutRedisOrActuatorOnTheClassPathTheLocalStarterStillStarts() {
        AutoConfigurations everything = AutoConfigurations.of(AopAutoConfiguration.class,
                LimiterRedisAutoConfiguration.class, LimiterAutoConfiguration.class,
                LimiterAopAutoConfiguration.class, LimiterWebAutoConfiguration.class,
                LimiterMetricsAutoConfiguration.class, LimiterActuatorAutoConfiguration.class);
        new WebApplicationContextRunner().withConfiguration(everything)
                .withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
                        "io.micrometer", "org.springframework.boot.actuate", "org.springframework.boot.health"))
                .withPropertyValues("limiter.limits.api.limit=5", "limiter.limits.api.window=1m")
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).getBean(RateLimitBackend.class).isInstanceOf(LocalBackend.class);
                    assertThat(context.getBean(RateLimiters.class).tryAcquire("api", "k").allowed()).isTrue();
                });
    }

    @Test
    void theFilterOrderIsAProperty() {
        this.webRunner.withPropertyValues("limiter.http.filter-order=-200").run((context) ->
                assertThat(context).getBean("rateLimitFilter", FilterRegistrationBean.class)
                        .extracting(FilterRegistrationBean::getOrder).isEqualTo(-200));
    }

    @Test
    void userBeansReplaceTheDefaults() {
        this.webRunner.withUserConfiguration(UserBeans.class).run((context) -> {
            assertThat(context).getBean(TimeSource.class).isSameAs(UserBeans.TIME);
            assertThat(context).getBean(RateLimitBackend.class).isSameAs(UserBeans.BACKEND);
            assertThat(context).getBean(RateLimitRejectionHandler.class).isSameAs(UserBeans.HANDLER);
            assertThat(context).hasSingleBean(RateLimiters.class);
        });
    }

    @Test
    void aUserRateLimitersIsUsedByTheAnnotationSupport() {
        this.runner.withBean("customLimiters", RateLimiters.class,
                () -> new RateLimiters(new LimitRegistry(), UserBeans.BACKEND)).run((context) -> {
                    assertThat(context).getBean(RateLimiters.class).isSameAs(context.getBean("customLimiters"));
                    assertThat(context).hasSingleBean(RateLimitedAdvisor.class);
                });
    }

    @Test
    void withoutSpringMvcTheWebPartBacksOff() {
        this.webRunner.withClassLoader(new FilteredClassLoader(HandlerExceptionResolver.class)).run((context) -> {
            assertThat(context).hasSingleBean(RateLimiters.class);
            assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
            assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class);
        });
    }

    @Test
    void aUserTimeSourceDrivesTheDefaultBackend() {
        this.runner.withUserConfiguration(ManualTime.class)
                .withPropertyValues("limiter.limits.api.limit=1", "limiter.limits.api.window=1s")
                .run((context) -> {
                    RateLimiters limiters = context.getBean(RateLimiters.class);
                    assertThat(limiters.tryAcquire("api", "k").allowed()).isTrue();
                    assertThat(limiters.tryAcquire("api", "k").allowed()).isFalse();
                    context.getBean(ManualTimeSource.class).advance(Duration.ofSeconds(1));
                    assertThat(limiters.tryAcquire("api", "k").allowed()).isTrue();
                });
    }

    @Test
    void configuredLimitsBecomeDefinitions() {
        this.runner.withPropertyValues("limiter.default-sub-windows=5", "limiter.limits.login.limit=5",
                "limiter.limits.login.window=1m", "limiter.limits.login.sub-windows=12",
                "limiter.limits.exact.limit=3", "limiter.limits.exact.window=PT1H",
                "limiter.limits.exact.algorithm=sliding-log").run((context) -> {
                    LimitRegistry registry = context.getBean(LimitRegistry.class);
                    assertThat(registry.get("login").limit()).isEqualTo(5);
                    assertThat(registry.get("login").window()).isEqualTo(Duration.ofMinutes(1));
                    assertThat(registry.get("login").subWindows()).isEqualTo(12);
                    assertThat(registry.get("exact").subWindows()).isEqualTo(5);
                    assertThat(registry.get("exact").algorithm()).isEqualTo(Algorithm.SLIDING_LOG);
                });
    }

    @Test
    void rateLimitersDecidesProgrammatically() {
        this.runner.withPropertyValues("limiter.limits.login.limit=2", "limiter.limits.login.window=1m")
                .run((context) -> {
                    RateLimiters limiters = context.getBean(RateLimiters.class);
                    assertThat(limiters.tryAcquire("login", "alice").remaining()).isEqualTo(1);
                    Decision denied = limiters.tryAcquire("login", "alice", 2);
                    assertThat(denied.allowed()).isFalse();
                    assertThat(denied.retryAfter()).isPositive();
                    assertThat(limiters.tryAcquire("login", "bob", 2).allowed()).isTrue();
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeans {

        static final TimeSource TIME = new ManualTimeSource(0);

        static final RateLimitBackend BACKEND = new LocalBackend(TIME, 10);

        static final RateLimitRejectionHandler HANDLER = (request, response, exception) -> response.setStatus(503);

        @Bean
        TimeSource customTime() {
            return TIME;
        }

        @Bean
        RateLimitBackend customBackend() {
            return BACKEND;
        }

        @Bean
        RateLimitRejectionHandler customHandler() {
            return HANDLER;
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class ManualTime {

        @Bean
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_000_000L);
        }

    }

}
