package io.slidinglimiter.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.metrics.LimiterMeters;
import io.slidinglimiter.metrics.LocalBackendMeters;

/**
 * The limiter's meters in the application's {@link MeterRegistry}.
 * <p>
 * {@code limiter.requests}, {@code limiter.backend.duration} and the local counters' meters
 * ({@code limiter.local.*}) in the application's {@link MeterRegistry}, when Micrometer is there.
 */
@AutoConfiguration(after = LimiterAutoConfiguration.class,
        afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, LimitRegistry.class })
public class LimiterMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LimiterMeters limiterMeters(MeterRegistry meterRegistry, LimitRegistry limitRegistry) {
        return new LimiterMeters(meterRegistry, limitRegistry);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RateLimitBackend.class)
    LocalBackendMeters limiterLocalBackendMeters(RateLimitBackend rateLimitBackend) {
        return new LocalBackendMeters(rateLimitBackend);
    }

}
