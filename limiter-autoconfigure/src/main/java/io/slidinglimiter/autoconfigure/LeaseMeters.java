package io.slidinglimiter.autoconfigure;

import java.util.function.ToLongFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.failover.FailoverStatus;
import io.slidinglimiter.failover.LeaseCounts;

/**
 * Counts each leasing limit's decisions as {@code limiter.lease.decisions} (tags {@code limit},
 * {@code source} = {@code lease} or the backend's name): admitted from a lease, or taken by the server.
 * <p>
 * Loaded only where Micrometer is: its signatures name it.
 */
final class LeaseMeters {

    private LeaseMeters() {
    }

    /**
     * Registers the meters of every limit of a backend that leases, as limits register.
     * @param meterRegistry where, when the application has one
     * @param limitRegistry the limits
     * @param backend the backend's failover status, which says which limits lease
     * @param backendName the backend's name, the {@code source} tag of what its server decided
     * @return what registers them once every singleton exists
     */
    static SmartInitializingSingleton binder(ObjectProvider<MeterRegistry> meterRegistry, LimitRegistry limitRegistry,
            FailoverStatus backend, String backendName) {
        return () -> meterRegistry.ifAvailable((registry) -> limitRegistry.onRegistration((definition) -> {
            if (backend.leases(definition)) {
                register(registry, backend, definition.name(), "lease", LeaseCounts::fromLease);
                register(registry, backend, definition.name(), backendName, LeaseCounts::fromServer);
            }
        }));
    }

    private static void register(MeterRegistry registry, FailoverStatus backend, String limitName, String source,
            ToLongFunction<LeaseCounts> count) {
        FunctionCounter.builder("limiter.lease.decisions", backend,
                (each) -> count.applyAsLong(each.leaseCounts(limitName)))
                .description("Decisions of a leasing limit, admitted from a lease or taken by the server")
                .tag("limit", limitName).tag("source", source).register(registry);
    }

}
