package io.slidinglimiter.autoconfigure;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.annotation.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits are never silently off: where the starter cannot apply them (a reactive web application,
 * URL rules without the servlet stack, a method whose result is deferred), the start fails and
 * says why and what to do.
 */
class UnsupportedStackTests {

    private static final AutoConfigurations LIMITER = AutoConfigurations.of(AopAutoConfiguration.class,
            LimiterAutoConfiguration.class, LimiterAopAutoConfiguration.class);

    private static final String[] RULE = { "limiter.limits.api.limit=2", "limiter.limits.api.window=1m",
            "limiter.http.rules[0].limit=api", "limiter.http.rules[0].path=/api/**" };

    @Test
    void anAnnotatedMethodInAReactiveWebApplicationFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(PlainService.class), (description) -> assertThat(description)
                        .contains("@RateLimited on " + UnsupportedStackTests.class.getName() + "$Service.hello()")
                        .contains("this is a reactive (WebFlux) web application, where a denial would reach the"
                                + " client as a 500"));
    }

    @Test
    void urlRulesInAReactiveWebApplicationFailTheStart() {
        FailureAnalysisAccess.assertStartFails(new ReactiveWebApplicationContextRunner().withConfiguration(LIMITER)
                .withPropertyValues(RULE), (description) -> assertThat(description)
                        .contains("limiter.http.rules\n        are set, but this application is a reactive (WebFlux) web"
                                + " application, so no URL rule would ever apply"));
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
    void aMethodWhoseResultIsDeferredFailsTheStartNamingIt() {
        FailureAnalysisAccess.assertStartFails(new ApplicationContextRunner().withConfiguration(LIMITER)
                .withUserConfiguration(DeferredResults.class), (description) -> assertThat(description)
                        .contains("$DeferredResults$1.mono()\n        the method returns a Publisher (Mono, Flux)")
                        .contains("$DeferredResults$1.flux()\n        the method returns a Publisher (Mono, Flux)")
                        .contains("$DeferredResults$1.future()\n        the method returns a CompletionStage")
                        .contains("so the limit would be decided when the result is built, not when its work"
                                + " runs"));
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
                public Flux<String> flux() {
                    return Flux.just("a");
                }

                @RateLimited(limit = 5, window = "1m")
                public CompletableFuture<String> future() {
                    return CompletableFuture.completedFuture("a");
                }

            };
        }

    }

}
