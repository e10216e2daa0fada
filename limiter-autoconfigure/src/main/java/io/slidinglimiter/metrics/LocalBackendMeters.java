package io.slidinglimiter.metrics;

import java.util.List;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.local.LocalBackend;

/**
 * Meters of the in-process counters.
 * <p>
 * Meters of the in-process counters, summed over the local backends an application decides with
 * (its local limits', and a remote backend's {@code local} fallback): {@code limiter.local.keys}
 * (counters held), {@code limiter.local.bytes} (their estimated bytes, the overflow sketches'
 * included), {@code limiter.local.fill} (how full the tighter bound is, 0 to 1) and
 * {@code limiter.local.overflow.decisions} (decisions taken through an overflow sketch because the
 * bounds were full). Reading them changes nothing.
 */
public final class LocalBackendMeters implements MeterBinder {

    private final List<LocalBackend> backends;

    /**
     * Meters of the local backends among a backend's parts.
     * @param backend the application's backend
     */
    public LocalBackendMeters(RateLimitBackend backend) {
        this.backends = backend.parts().stream().filter(LocalBackend.class::isInstance).map(LocalBackend.class::cast)
                .toList();
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (this.backends.isEmpty()) {
            return;
        }
        Gauge.builder("limiter.local.keys", this, sum(LocalBackend::heldCounters))
                .description("Counters held in memory by the local backend").baseUnit("keys").register(registry);
        Gauge.builder("limiter.local.bytes", this,
                sum((backend) -> backend.liveBytes() + backend.overflowBytes()))
                .description("Estimated bytes of the local counters and overflow sketches").baseUnit("bytes")
                .register(registry);
        Gauge.builder("limiter.local.fill", this, (meters) -> meters.backends.stream()
                .mapToDouble(LocalBackend::fill).max().orElse(0))
                .description("How full the local backend's bound is (1: new keys go to the overflow sketch)")
                .register(registry);
        FunctionCounter.builder("limiter.local.overflow.decisions", this, sum(LocalBackend::overflowDecisions))
                .description("Decisions taken through the overflow sketch because the local bound was full")
                .register(registry);
    }

    private static ToDoubleFunction<LocalBackendMeters> sum(ToDoubleFunction<LocalBackend> figure) {
        return (meters) -> meters.backends.stream().mapToDouble(figure).sum();
    }

}
