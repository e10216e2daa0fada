package io.slidinglimiter.gateway;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;

import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterGatewayAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's rate limiter bean: the default when the application has no other, and a start
 * that fails naming a route mapped to a limit that does not exist.
 */
class LimiterGatewayAutoConfigurationTests {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LimiterAutoConfiguration.class,
                    LimiterGatewayAutoConfiguration.class))
            .withPropertyValues("limiter.limits.api.limit=3", "limiter.limits.api.window=1m");

    @Test
    void withoutAnotherRateLimiterItIsTheDefault() {
        this.runner.run((context) -> assertThat(context.getBean(RateLimiter.class))
                .isSameAs(context.getBean(LimiterGatewayAutoConfiguration.BEAN_NAME)));
    }

    @Test
    void aRouteMappedToAnUndefinedLimitFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(this.runner.withPropertyValues("limiter.gateway.routes.orders=nope"),
                (description) -> assertThat(description).contains("limiter.gateway.routes.orders")
                        .contains("names 'nope', which is not under limiter.limits"));
    }

}
