package io.slidinglimiter.benchmarks.peers;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * The peers' annotations that run on Spring Boot 4, called through their Spring proxies as an
 * application calls them, beside the same method without the annotation. Bucket4j's starter does
 * not start on Boot 4 (see {@link PeerAnnotations#main}); Resilience4j's runs once its check that
 * refuses Boot 4 is excluded.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PeerAnnotationBenchmarks {

    @State(Scope.Benchmark)
    public static class Resilience4j {

        ConfigurableApplicationContext context;

        PeerAnnotations.Resilience4jService service;

        @Setup(Level.Trial)
        public void start() {
            this.context = PeerAnnotations.resilience4j(true);
            this.service = this.context.getBean(PeerAnnotations.Resilience4jService.class);
        }

        @TearDown(Level.Trial)
        public void stop() {
            this.context.close();
        }

    }

    @Benchmark
    public Object resilience4jAnnotated(Resilience4j peer) {
        return peer.service.call("k");
    }

    @Benchmark
    public Object resilience4jUnannotated(Resilience4j peer) {
        return peer.service.plain("k");
    }

}
