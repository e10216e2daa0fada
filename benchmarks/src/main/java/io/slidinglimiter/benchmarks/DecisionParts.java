package io.slidinglimiter.benchmarks;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitStatistics;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;

/**
 * What one local decision is made of, part by part, in the Spring context of {@link LocalBenchmarks}.
 * <p>
 * The clock's read, a map look-up, the statistics' count (against a bare {@code LongAdder}), the
 * backend's decision, and the public API with the limit resolved once, looked up by the caller, or
 * looked up by name. Subtracting one row from the next gives what each layer adds (BENCHMARKS.md).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DecisionParts {

    /** The wired beans of the application, and one of each part on its own. */
    @State(Scope.Benchmark)
    public static class Parts {

        LimitRegistry.Handle handle;

        LimitDefinition definition;

        RateLimitBackend backend;

        RateLimiters rateLimiters;

        TimeSource clock = TimeSource.ticking();

        ConcurrentHashMap<String, Object> map = new ConcurrentHashMap<>();

        LongAdder adder = new LongAdder();

        LimitStatistics statistics = new LimitStatistics();

        @Setup(Level.Trial)
        public void start(LocalBenchmarks.Ours ours) {
            this.rateLimiters = ours.rateLimiters;
            this.handle = this.rateLimiters.handle("allow");
            this.definition = this.handle.definition();
            this.backend = ours.context.getBean(RateLimitBackend.class);
            this.map.put("allow", "x");
            this.clock.register();
        }

    }

    @Benchmark
    public long clock(Parts parts) {
        return parts.clock.currentTimeMillis();
    }

    @Benchmark
    public Object mapGet(Parts parts) {
        return parts.map.get("allow");
    }

    @Benchmark
    public void adder(Parts parts) {
        parts.adder.increment();
    }

    @Benchmark
    public void statistics(Parts parts) {
        parts.statistics.record(true);
    }

    @Benchmark
    public boolean backendAdmit(Parts parts) {
        return parts.backend.admit(parts.definition, "k", 1);
    }

    @Benchmark
    public boolean handleAdmit(Parts parts) {
        return parts.rateLimiters.admit(parts.handle, "k", 1);
    }

    @Benchmark
    public boolean lookupThenHandleAdmit(Parts parts) {
        return parts.rateLimiters.admit(parts.rateLimiters.handle("allow"), "k", 1);
    }

    @Benchmark
    public boolean nameAdmit(Parts parts) {
        return parts.rateLimiters.admit("allow", "k");
    }

}
