package io.slidinglimiter.benchmarks;

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

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * Leases on one hot key of Redis, measured through the public API.
 * <p>
 * One hot key on Redis through the public API, the starter in a Spring context as applications get
 * it (the wired backend with its 100 ms timeout), with and without {@code lease}: decisions per
 * microsecond and, with {@code -prof gc}, bytes per decision. Starts its own redis-server.
 * <pre>
 * benchmarks/jmh.sh -f 1 -wi 2 -w 2 -i 3 -r 2 -t 1 -prof gc LeaseBenchmarks
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LeaseBenchmarks {

    private RedisServer server;

    private ConfigurableApplicationContext context;

    private RateLimiters rateLimiters;

    @Setup(Level.Trial)
    public void start() {
        this.server = RedisServer.start();
        this.context = new SpringApplicationBuilder(BenchApplication.class).web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties("logging.level.root=warn", BenchApplication.WITHOUT_METRICS, "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + this.server.port(), "limiter.backend=redis",
                        "limiter.limits.leased.limit=1000000000000", "limiter.limits.leased.window=1m",
                        "limiter.limits.leased.lease=true", "limiter.limits.plain.limit=1000000000000",
                        "limiter.limits.plain.window=1m",
                        // The bench service's own limits, which the application needs to start.
                        "limiter.limits.allow.limit=1000", "limiter.limits.allow.window=1s",
                        "limiter.limits.charged-less.limit=1000", "limiter.limits.charged-less.window=1s",
                        "limiter.limits.charged-same.limit=1000", "limiter.limits.charged-same.window=1s",
                        "limiter.limits.reject.limit=1", "limiter.limits.reject.window=1h")
                .run();
        this.rateLimiters = this.context.getBean(RateLimiters.class);
    }

    @TearDown(Level.Trial)
    public void stop() {
        this.context.close();
        this.server.close();
    }

    /** Admitted from a lease nearly every time. */
    @Benchmark
    public Decision leased() {
        return this.rateLimiters.tryAcquire("leased", "hot");
    }

    /** Every decision a script call: the same key without leases. */
    @Benchmark
    public Decision withoutLease() {
        return this.rateLimiters.tryAcquire("plain", "hot");
    }

}
