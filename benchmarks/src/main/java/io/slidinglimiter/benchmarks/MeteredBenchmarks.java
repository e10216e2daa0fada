package io.slidinglimiter.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.RateLimiters;

/**
 * The decisions of {@link LocalBenchmarks} in an application with Actuator, as the sample
 * application and most users have it: Spring Boot's meter registry and observation registry, so
 * the starter's {@code limiter.backend.duration} timer and {@code limiter.decision} observation are
 * on, then Boot's switches for them turned off one after the other. {@link LocalBenchmarks} leaves
 * them out; the difference is what metrics cost a decision.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MeteredBenchmarks {

    @State(Scope.Benchmark)
    public static class Metered {

        /**
         * Boot's defaults with Actuator; {@code management.observations.enable.limiter=false}; and
         * that with {@code management.metrics.enable.limiter.backend.duration=false}.
         */
        @Param({ "on", "observation-off", "both-off" })
        String meters;

        ConfigurableApplicationContext context;

        RateLimiters rateLimiters;

        BenchService service;

        @Setup(Level.Trial)
        public void start() {
            this.context = new SpringApplicationBuilder(BenchApplication.class).web(WebApplicationType.NONE)
                    .logStartupInfo(false)
                    .properties(LocalBenchmarks.Ours.LIMITS).properties(switches(this.meters)).run();
            this.rateLimiters = this.context.getBean(RateLimiters.class);
            this.service = this.context.getBean(BenchService.class);
            this.rateLimiters.tryAcquire("reject", "k");
        }

        private static String[] switches(String meters) {
            String observationOff = "management.observations.enable.limiter=false";
            return switch (meters) {
                case "on" -> new String[0];
                case "observation-off" -> new String[] { observationOff };
                case "both-off" -> new String[] { observationOff,
                        "management.metrics.enable.limiter.backend.duration=false" };
                default -> throw new IllegalArgumentException("meters must be on, observation-off or both-off");
            };
        }

        @TearDown(Level.Trial)
        public void stop() {
            this.context.close();
        }

    }

    @Benchmark
    public boolean meteredAdmit(Metered metered) {
        return metered.rateLimiters.admit("allow", "k");
    }

    @Benchmark
    public Object meteredAllow(Metered metered) {
        return metered.rateLimiters.tryAcquire("allow", "k");
    }

    @Benchmark
    public Object meteredReject(Metered metered) {
        return metered.rateLimiters.tryAcquire("reject", "k");
    }

    @Benchmark
    public Object meteredAnnotatedAllow(Metered metered) {
        return metered.service.call("k");
    }

}
