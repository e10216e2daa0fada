package io.slidinglimiter.autoconfigure;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Live changes of {@code limiter.limits} (issue 18, item 3): what Spring Cloud's
 * {@code /actuator/refresh} does to the Environment, then its {@link EnvironmentChangeEvent}.
 */
@ExtendWith(OutputCaptureExtension.class)
class LiveLimitChangesTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LimiterAutoConfiguration.class))
            .withUserConfiguration(FixedClock.class)
            .withPropertyValues("limiter.limits.api.limit=3", "limiter.limits.api.window=1m");

    @Test
    void newPermitsApplyAtOnceAndKeepTheCounts() {
        this.runner.run((context) -> {
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            rateLimiters.tryAcquire("api", "k", 2);
            change(context, "limiter.limits.api.limit=5");
            assertThat(rateLimiters.definition("api").limit()).isEqualTo(5);
            assertThat(rateLimiters.peek("api", "k").remaining()).as("2 of 5 used").isEqualTo(3);
        });
    }

    @Test
    void anotherWindowStartsFreshCounters() {
        this.runner.run((context) -> {
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            rateLimiters.tryAcquire("api", "k", 3);
            change(context, "limiter.limits.api.window=30s", "limiter.limits.api.sub-windows=5");
            assertThat(rateLimiters.definition("api").window()).hasSeconds(30);
            assertThat(rateLimiters.tryAcquire("api", "k", 3).allowed()).as("fresh counters").isTrue();
        });
    }

    @Test
    void aNewLimitCanBeUsedByNameAndShadowModeFollows() {
        this.runner.run((context) -> {
            change(context, "limiter.limits.search.limit=1", "limiter.limits.search.window=1m",
                    "limiter.limits.api.shadow=true");
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            assertThat(rateLimiters.tryAcquire("search", "k").allowed()).isTrue();
            assertThat(rateLimiters.tryAcquire("search", "k").allowed()).isFalse();
            assertThat(rateLimiters.isShadow("api")).isTrue();
        });
    }

    @Test
    void invalidNewValuesKeepTheOldOnesAndNameTheProperty(CapturedOutput output) {
        this.runner.run((context) -> {
            change(context, "limiter.limits.api.limit=0");
            assertThat(context.getBean(LimitRegistry.class).get("api").limit()).isEqualTo(3);
            assertThat(output.getOut()).contains("The new value of limiter.limits.api.limit Limit 'api': limit must"
                    + " be greater than 0 but was 0: limit 'api' keeps its values.");
        });
    }

    @Test
    void plansChangeLiveAndKeepTheCounts(CapturedOutput output) {
        this.runner.withPropertyValues("limiter.limits.api.plans.pro.limit=5").run((context) -> {
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            assertThat(rateLimiters.tryAcquire("api", "k", 4, "pro").allowed()).isTrue();
            change(context, "limiter.limits.api.plans.pro.limit=6", "limiter.limits.api.plans.team.limit=10");
            assertThat(context.getBean(LimitRegistry.class).handle("api").plans()).containsExactly(
                    entry("pro", 6L), entry("team", 10L));
            assertThat(rateLimiters.tryAcquire("api", "k", 2, "pro").allowed()).as("4 of 6 used").isTrue();
            assertThat(rateLimiters.tryAcquire("api", "k", 1, "team").allowed()).as("6 of 10 used").isTrue();
            change(context, "limiter.limits.api.plans.pro.limit=-1");
            assertThat(context.getBean(LimitRegistry.class).handle("api").plans()).containsEntry("pro", 6L);
            assertThat(output.getOut()).contains("The new value of limiter.limits.api.plans.pro.limit must be greater"
                    + " than 0 but was -1: limit 'api' keeps its values.");
        });
    }

    @Test
    void otherChangesAreIgnored() {
        this.runner.run((context) -> {
            TestPropertyValues.of("limiter.limits.api.limit=9").applyTo(context.getEnvironment());
            context.publishEvent(new EnvironmentChangeEvent(context, Set.of("server.port")));
            assertThat(context.getBean(RateLimiters.class).definition("api").limit()).isEqualTo(3);
        });
    }

    /** What /actuator/refresh does: new values in the Environment, then the event naming the keys. */
    private static void change(ConfigurableApplicationContext context, String... properties) {
        TestPropertyValues.of(properties).applyTo(context.getEnvironment());
        Set<String> keys = new HashSet<>();
        for (String property : properties) {
            keys.add(property.substring(0, property.indexOf('=')));
        }
        context.publishEvent(new EnvironmentChangeEvent(context, keys));
    }

    @Configuration(proxyBeanMethods = false)
    static class FixedClock {

        @Bean
        ManualTimeSource manualTimeSource() {
            return new ManualTimeSource(1_700_000_040_000L);
        }

    }

}
