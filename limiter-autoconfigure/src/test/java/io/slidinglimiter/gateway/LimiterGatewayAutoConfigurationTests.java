package io.slidinglimiter.gateway;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.autoconfigure.FailureAnalysisAccess;
import io.slidinglimiter.autoconfigure.LimiterAutoConfiguration;
import io.slidinglimiter.autoconfigure.LimiterGatewayAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway's rate limiter bean: the default when the application has no other, and a start
 * that fails naming a route mapped to a limit that does not exist, or a route in properties limited
 * by it without a limit.
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
    void aRouteLimitedWithoutALimitFailsTheStartNamingTheRouteAndBothFixes() {
        FailureAnalysisAccess.assertStartFails(this.runner.withUserConfiguration(Routes.class)
                .withPropertyValues(all(route(0, "orders", "#{@slidingWindowRateLimiter}"), route(1, "api", null))),
                (description) -> assertThat(description)
                        .contains(ROUTES + "[0] (id 'orders')\n        is limited by slidingWindowRateLimiter through"
                                + " RequestRateLimiter, but no limit 'orders' is defined")
                        .doesNotContain("id 'api'"));
        this.runner.withUserConfiguration(Routes.class).withPropertyValues(route(0, "orders", null))
                .run((context) -> assertThat(FailureAnalysisAccess.of(context.getStartupFailure()).getAction())
                        .contains("Define limiter.limits.orders (limit and window), or name a defined limit"
                                + " in limiter.gateway.routes.orders."));
    }

    @Test
    void routesWithTheirLimitOrAnotherRateLimiterStart() {
        this.runner.withUserConfiguration(Routes.class)
                .withPropertyValues(all(route(0, "api", "#{@slidingWindowRateLimiter}"), route(1, "mapped", null),
                        new String[] { "limiter.gateway.routes.mapped=api" },
                        route(2, "elsewhere", "#{@otherRateLimiter}")))
                .run((context) -> assertThat(context).hasNotFailed());
    }

    @Test
    void aRouteMappedToAnUndefinedLimitFailsTheStart() {
        FailureAnalysisAccess.assertStartFails(this.runner.withPropertyValues("limiter.gateway.routes.orders=nope"),
                (description) -> assertThat(description).contains("limiter.gateway.routes.orders")
                        .contains("names 'nope', which is not under limiter.limits"));
    }

    private static final String ROUTES = "spring.cloud.gateway.server.webflux.routes";

    /** A route in properties with a RequestRateLimiter filter, naming a rate limiter or using the default. */
    private static String[] route(int index, String id, String rateLimiter) {
        String route = ROUTES + "[" + index + "]";
        List<String> properties = new ArrayList<>(List.of(route + ".id=" + id, route + ".uri=http://127.0.0.1:1",
                route + ".predicates[0]=Path=/" + id + "/**", route + ".filters[0].name=RequestRateLimiter"));
        if (rateLimiter != null) {
            properties.add(route + ".filters[0].args.rate-limiter=" + rateLimiter);
        }
        return properties.toArray(String[]::new);
    }

    private static String[] all(String[]... groups) {
        return Arrays.stream(groups).flatMap(Arrays::stream).toArray(String[]::new);
    }

    /** The gateway's routes from properties, and its filter with this rate limiter as the default. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(GatewayProperties.class)
    static class Routes {

        @Bean
        RequestRateLimiterGatewayFilterFactory requestRateLimiterGatewayFilterFactory(RateLimiter<?> rateLimiter) {
            return new RequestRateLimiterGatewayFilterFactory(rateLimiter, (exchange) -> Mono.just("k"));
        }

    }

}
