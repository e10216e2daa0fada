package io.slidinglimiter.metrics;

import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.micrometer.core.instrument.MeterRegistry;

import io.slidinglimiter.RateLimiters;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local counters' meters (SPEC §7): the keys held, their bytes, the bound's fill and the
 * decisions the overflow made, as an application with Actuator reads them; reading changes nothing.
 */
class LocalBackendMetersTests {

    @Test
    void theKeysHeldTheFillAndTheOverflowsDecisionsAreMetered() {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(
                MetricsSwitchesTests.MeteredApplication.class).web(WebApplicationType.NONE)
            .properties("limiter.limits.metered.limit=5", "limiter.limits.metered.window=1h",
                    "limiter.local.max-keys=10", "limiter.local.overflow-keys=1000")
            .run()) {
            RateLimiters rateLimiters = context.getBean(RateLimiters.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            for (int key = 0; key < 15; key++) {
                rateLimiters.tryAcquire("metered", "user-" + key);
            }
            assertThat(meters.get("limiter.local.keys").gauge().value()).isEqualTo(10);
            assertThat(meters.get("limiter.local.fill").gauge().value()).isEqualTo(1.0);
            assertThat(meters.get("limiter.local.overflow.decisions").functionCounter().count()).isEqualTo(5);
            assertThat(meters.get("limiter.local.bytes").gauge().value()).isPositive();
            // Reading the meters again changes nothing.
            assertThat(meters.get("limiter.local.keys").gauge().value()).isEqualTo(10);
        }
    }

}
