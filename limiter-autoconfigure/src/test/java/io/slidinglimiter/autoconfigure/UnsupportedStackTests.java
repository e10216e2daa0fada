package io.slidinglimiter.autoconfigure;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.web.ReactiveRateLimitFilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Limits are never silently off: where the starter cannot apply them (a plain-valued method in a
 * reactive web application, URL rules outside a web application, a method whose result is deferred
 * in a way the aspect cannot follow), the start fails and says why and what to do.
 */
class UnsupportedStackTests {

    private static final AutoConfigurations LIMITER = AutoConfigurations.of(AopAutoConfiguration.class,
            LimiterAutoConfiguration.class, LimiterAopAutoConfiguration.class);

    private static final String[] RULE = { "limiter.limits.api.limit=2", "limiter.limits.api.window=1m",
            "limiter.http.rules[0].limit=api", "limiter.http.rules[0].path=/api/**" };

    @Test
    void aMethodReturningAPlainValueInAReactiveWebApplicationFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(PlainService.class), (description) -> assertThat(description)
                        .contains("@RateLimited on " + UnsupportedStackTests.class.getName() + "$Service.hello()")
                        .contains("this is a reactive (WebFlux) web application and the method returns a plain value"));
    }

    @Test
    void aMethodReturningAPlainValueInAReactiveWebApplicationStartsWithContextPropagation() {
        new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER).withUserConfiguration(PlainService.class)
                .withPropertyValues("spring.reactor.context-propagation=auto")
                .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aMethodReturningAPlainValueInAReactiveWebApplicationFailsTheStartWhenDecisionsMayBlock() {
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(PlainService.class, BlockingBackend.class)
                .withPropertyValues("spring.reactor.context-propagation=auto"), (description) -> assertThat(description)
                        .contains("@RateLimited on " + UnsupportedStackTests.class.getName() + "$Service.hello()")
                        .contains("the event loop would block"));
    }

    /** A CompletableFuture is decided before the method runs, on the calling thread: an event loop here. */
    @Test
    void aMethodReturningAFutureInAReactiveWebApplicationFailsTheStartWhenItsLimitMayBlock() {
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(FutureService.class, BlockingBackend.class)
                .withPropertyValues("spring.reactor.context-propagation=auto"), (description) -> assertThat(description)
                        .contains("$Futures.later()").contains("the event loop would block"));
    }

    /** Only the method's own limits count: a plain-valued method whose limit is local starts beside Redis. */
    @Test
    void aMethodReturningAPlainValueInAReactiveWebApplicationStartsWhenItsOwnLimitsDoNotBlock() {
        new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(PlainService.class, BlockingForOneLimit.class)
                .withPropertyValues("spring.reactor.context-propagation=auto")
                .run((context) -> assertThat(context).hasNotFailed());
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(RemoteService.class, BlockingForOneLimit.class)
                .withPropertyValues("spring.reactor.context-propagation=auto"), (description) -> assertThat(description)
                        .contains("$Remote.hello()").contains("the decisions of remote wait for Redis"));
    }

    @Test
    void urlRulesAndReactiveMethodsInAReactiveWebApplicationStart() {
        new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withConfiguration(AutoConfigurations.of(LimiterReactiveWebAutoConfiguration.class))
                .withUserConfiguration(ReactiveService.class).withPropertyValues(RULE)
                .run((context) -> assertThat(context).hasNotFailed().hasSingleBean(ReactiveRateLimitFilter.class));
    }

    @Test
    void outsideAWebRequestAMonoIsDecidedWhenSubscribedTo() {
        new ApplicationContextRunner().withConfiguration(LIMITER).withUserConfiguration(ReactiveService.class)
                .run((context) -> {
                    Greeter greeter = context.getBean(Greeter.class);
                    Mono<String> never = greeter.greet();
                    for (int i = 0; i < 5; i++) {
                        greeter.greet();
                    }
                    assertThat(greeter.greet().block()).isEqualTo("hi");
                    assertThat(never.block()).as("built first, subscribed second").isEqualTo("hi");
                    assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> never.block());
                    assertThat(greeter.greetings()).isEqualTo(2);
                });
    }

    @Test
    void urlRulesOutsideAWebApplicationFailTheStart() {
        FailureAnalysisAccess.assertStartFails(new ApplicationContextRunner().withConfiguration(LIMITER)
                .withPropertyValues(RULE), (description) -> assertThat(description)
                        .contains("limiter.http.rules\n        are set, but this application is not a web application"));
    }

    @Test
    void urlRulesAndAnnotationsInAServletApplicationStart() {
        new WebApplicationContextRunner().withConfiguration(LIMITER).withUserConfiguration(PlainService.class)
                .withPropertyValues(RULE).run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aMethodWhoseResultIsDeferredOtherwiseFailsTheStartNamingIt() {
        FailureAnalysisAccess.assertStartFails(new ApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(DeferredResults.class), (description) -> assertThat(description)
                        .contains("$DeferredResults$1.publisher()\n        the method returns a Publisher other than"
                                + " a Mono or a Flux")
                        .contains("$DeferredResults$1.future()\n        the method returns a Future other than a"
                                + " CompletableFuture")
                        .contains("so the limit would be decided when the result is built, not when its work"
                                + " runs")
                        .doesNotContain("mono()").doesNotContain("completable()"));
    }

    @Test
    void theFailureNamesTheReturnTypesThatWork() {
        new ApplicationContextRunner().withConfiguration(LIMITER).withUserConfiguration(DeferredResults.class)
                .run((context) -> assertThat(FailureAnalysisAccess.of(context.getStartupFailure()).getAction())
                        .contains("Return a plain value or a CompletableFuture (decided before the method runs), a"
                                + " Mono or a Flux (decided when subscribed to); in Kotlin, a suspend function or a"
                                + " Flow, with kotlinx-coroutines-reactor"));
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainService {

        @Bean
        Service service() {
            return new Service();
        }

    }

    static class Service {

        @RateLimited(limit = 5, window = "1m")
        public String hello() {
            return "hello";
        }

    }

    /** A backend that waits for I/O, as the Redis backend does: here, in-process counters that say so. */
    @Configuration(proxyBeanMethods = false)
    static class BlockingBackend {

        @Bean
        RateLimitBackend rateLimitBackend() {
            return blockingFor((name) -> true);
        }

    }

    /** A backend whose one limit, {@code remote}, waits for I/O, as a Redis limit beside local ones does. */
    @Configuration(proxyBeanMethods = false)
    static class BlockingForOneLimit {

        @Bean
        RateLimitBackend rateLimitBackend() {
            return blockingFor("remote"::equals);
        }

    }

    /** A local backend that says the decisions of the limits named so may block. */
    static RateLimitBackend blockingFor(Predicate<String> blocks) {
        return new LocalBackend() {

            @Override
            public boolean mayBlock() {
                return true;
            }

            @Override
            public boolean mayBlock(LimitDefinition limit) {
                return blocks.test(limit.name());
            }

        };
    }

    @Configuration(proxyBeanMethods = false)
    static class FutureService {

        @Bean
        Futures futures() {
            return new Futures();
        }

    }

    static class Futures {

        @RateLimited(limit = 5, window = "1m")
        public CompletableFuture<String> later() {
            return CompletableFuture.completedFuture("later");
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class RemoteService {

        @Bean
        Remote remote() {
            return new Remote();
        }

    }

    static class Remote {

        @RateLimited(name = "remote", limit = 5, window = "1m")
        public String hello() {
            return "hello";
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class ReactiveService {

        @Bean
        Greeter greeter() {
            return new Greeter();
        }

    }

    static class Greeter {

        private final AtomicInteger greetings = new AtomicInteger();

        @RateLimited(limit = 2, window = "1m")
        public Mono<String> greet() {
            return Mono.fromSupplier(() -> {
                this.greetings.incrementAndGet();
                return "hi";
            });
        }

        int greetings() {
            return this.greetings.get();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class DeferredResults {

        @Bean
        Object deferred() {
            return new Object() {

                @RateLimited(limit = 5, window = "1m")
                public Mono<String> mono() {
                    return Mono.just("a");
                }

                @RateLimited(limit = 5, window = "1m")
                public Publisher<String> publisher() {
                    return Flux.just("a");
                }

                @RateLimited(limit = 5, window = "1m")
                public Future<String> future() {
                    return new FutureTask<>(() -> "a");
                }

                @RateLimited(limit = 5, window = "1m")
                public CompletableFuture<String> completable() {
                    return CompletableFuture.completedFuture("a");
                }

            };
        }

    }

}
