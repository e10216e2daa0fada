package io.slidinglimiter.metrics;

import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.noop.NoopTimer;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitStatistics;

/**
 * The limiter's meters in the application's {@link MeterRegistry}, each resolved once.
 * <p>
 * {@code limiter.requests} (tags {@code limit} and {@code outcome} = {@code allowed},
 * {@code rejected}, {@code fallback} or {@code shadow-rejected}) reads each limit's {@link
 * LimitStatistics}, so counting costs
 * a decision one uncontended add; {@code limiter.charge.errors} (tag {@code limit}) counts calls
 * left at their cost because their charge could not be settled; {@code limiter.backend.duration}
 * (tag {@code backend}) times backend calls. No tag ever holds a key.
 */
public final class LimiterMeters implements BackendTimers {

    private final MeterRegistry meterRegistry;

    /**
     * Registers the request counters of every limit, now and as limits are added.
     * @param meterRegistry the application's registry
     * @param limits the limits
     */
    public LimiterMeters(MeterRegistry meterRegistry, LimitRegistry limits) {
        this.meterRegistry = meterRegistry;
        limits.onRegistration((definition) -> bind(definition, limits.statistics(definition.name())));
    }

    /**
     * {@inheritDoc}
     * <p>
     * Null when the application's meter filters deny the timer
     * ({@code management.metrics.enable.limiter.backend.duration=false}, or {@code ...limiter=false}):
     * the registry then gives a timer that records nothing, and reading the clock twice around every
     * decision for it would cost a local decision more than the decision itself.
     */
    @Override
    public LongConsumer forBackend(String backend) {
        Timer timer = Timer.builder("limiter.backend.duration").description("Time a rate-limit backend took to decide")
                .tag("backend", backend).register(this.meterRegistry);
        if (timer instanceof NoopTimer) {
            return null;
        }
        return (nanos) -> timer.record(nanos, TimeUnit.NANOSECONDS);
    }

    private void bind(LimitDefinition definition, LimitStatistics statistics) {
        counter(definition, "allowed", statistics, LimitStatistics::allowed);
        counter(definition, "rejected", statistics, LimitStatistics::rejected);
        counter(definition, "fallback", statistics, LimitStatistics::fallback);
        counter(definition, "shadow-rejected", statistics, LimitStatistics::shadowRejected);
        FunctionCounter.builder("limiter.charge.errors", statistics, LimitStatistics::chargeErrors)
                .description("Calls left at their cost because their charge could not be settled")
                .tag("limit", definition.name()).register(this.meterRegistry);
    }

    private void counter(LimitDefinition definition, String outcome, LimitStatistics statistics,
            java.util.function.ToDoubleFunction<LimitStatistics> count) {
        FunctionCounter.builder("limiter.requests", statistics, count)
                .description("Rate-limit decisions, by limit and outcome")
                .tag("limit", definition.name()).tag("outcome", outcome).register(this.meterRegistry);
    }

}
