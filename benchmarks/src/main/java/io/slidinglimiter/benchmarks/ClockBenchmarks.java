package io.slidinglimiter.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

import io.slidinglimiter.core.TimeSource;

/**
 * What reading the time costs on this machine.
 * <p>
 * The system clocks every peer reads per decision,
 * the monotonic source read directly, and the default ticking source. Nanoseconds per read.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class ClockBenchmarks {

    private final TimeSource monotonic = TimeSource.monotonic();

    private final TimeSource ticking = TimeSource.ticking();

    @Benchmark
    public long systemNanoTime() {
        return System.nanoTime();
    }

    @Benchmark
    public long systemCurrentTimeMillis() {
        return System.currentTimeMillis();
    }

    @Benchmark
    public long monotonicSource() {
        return this.monotonic.currentTimeMillis();
    }

    @Benchmark
    public long tickingSource() {
        return this.ticking.currentTimeMillis();
    }

}
