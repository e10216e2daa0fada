package io.slidinglimiter.benchmarks;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.alibaba.csp.sentinel.slots.statistic.metric.ArrayMetric;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.common.util.concurrent.RateLimiter;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
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
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.local.RawCounter;

/**
 * One in-process decision, ours against the peers'.
 * <p>
 * One decision, ours and the peers', in-process: the counter alone (its allocation-free
 * {@code acquire}, and {@code tryAcquire} with its {@code Decision}), the public API, the annotated
 * call, and each peer's bare limiter; one key (shared by the threads, so {@code -t 2} contends) and
 * 100 000 keys with the map lookup included; an allow path (a limit never reached) and a reject
 * path (a limit used up). Throughput in operations per microsecond.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LocalBenchmarks {

    static final long NEVER_REACHED = 1L << 50;

    static final int KEYS = 100_000;

    static final String[] KEY_NAMES = new String[KEYS];

    static {
        for (int i = 0; i < KEYS; i++) {
            KEY_NAMES[i] = "client-" + i;
        }
    }

    /** Each thread walks the keys from its own random start. */
    @State(Scope.Thread)
    public static class KeyCursor {

        int next = (int) (Math.random() * KEYS);

        String key() {
            int index = this.next;
            this.next = (index + 1 == KEYS) ? 0 : index + 1;
            return KEY_NAMES[index];
        }

    }

    /** The public API over a registry and a local backend made by hand: what the core gives without Spring. */
    @State(Scope.Benchmark)
    public static class Bare {

        RateLimiters rateLimiters;

        LocalBackend backend;

        @Setup(Level.Trial)
        public void start() {
            LimitRegistry registry = new LimitRegistry();
            registry.register(LimitDefinition.of("allow", NEVER_REACHED, Duration.ofSeconds(1), 10));
            registry.register(LimitDefinition.of("reject", 1, Duration.ofHours(1), 10));
            this.backend = new LocalBackend(TimeSource.ticking(), 1_000_000);
            this.rateLimiters = new RateLimiters(registry, this.backend);
            this.rateLimiters.tryAcquire("reject", "k");
        }

        @TearDown(Level.Trial)
        public void stop() {
            this.backend.close();
        }

    }

    @State(Scope.Benchmark)
    public static class Ours {

        /**
         * The starter's per-decision meters: {@code none} leaves them out (every round before the one
         * "With Actuator" in BENCHMARKS.md); {@code on} is Boot's defaults with Actuator (a
         * Prometheus registry, Boot's observation registry), which time and observe decisions made
         * in Redis only; {@code local-on} also {@code limiter.observations.local=true} (the
         * {@code limiter.backend.duration} timer and the {@code limiter.decision} observation on
         * every local decision); {@code observation-off} that with
         * {@code management.observations.enable.limiter=false}; {@code both-off} also
         * {@code management.metrics.enable.limiter.backend.duration=false}.
         */
        @Param({ "none" })
        String meters;

        ConfigurableApplicationContext context;

        RateLimiters rateLimiters;

        BenchService service;

        RawCounter allowCounter;

        RawCounter rejectCounter;

        long now = System.currentTimeMillis();

        @Setup(Level.Trial)
        public void start() {
            this.context = new SpringApplicationBuilder(BenchApplication.class).web(WebApplicationType.NONE)
                    .logStartupInfo(false)
                    .properties("logging.level.root=warn", "limiter.local.max-keys=1000000",
                            "limiter.limits.allow.limit=" + NEVER_REACHED, "limiter.limits.allow.window=1s",
                            "limiter.limits.charged-less.limit=" + NEVER_REACHED,
                            "limiter.limits.charged-less.window=1s",
                            "limiter.limits.charged-same.limit=" + NEVER_REACHED,
                            "limiter.limits.charged-same.window=1s",
                            "limiter.limits.reject.limit=1", "limiter.limits.reject.window=1h")
                    .properties(switches(this.meters)).run();
            this.rateLimiters = this.context.getBean(RateLimiters.class);
            this.service = this.context.getBean(BenchService.class);
            this.rateLimiters.tryAcquire("reject", "k");
            this.allowCounter = RawCounter.slidingWindow(1000, 10, this.now);
            this.rejectCounter = RawCounter.slidingWindow(3_600_000, 10, this.now);
            this.rejectCounter.tryAcquire(this.now, 1, 1);
        }

        private static String[] switches(String meters) {
            String localOn = "limiter.observations.local=true";
            String observationOff = "management.observations.enable.limiter=false";
            return switch (meters) {
                case "none" -> new String[] { BenchApplication.WITHOUT_METRICS };
                case "on" -> new String[0];
                case "local-on" -> new String[] { localOn };
                case "observation-off" -> new String[] { localOn, observationOff };
                case "both-off" -> new String[] { localOn, observationOff,
                        "management.metrics.enable.limiter.backend.duration=false" };
                default -> throw new IllegalArgumentException(
                        "meters must be none, on, local-on, observation-off or both-off");
            };
        }

        @TearDown(Level.Trial)
        public void stop() {
            this.context.close();
        }

    }

    @State(Scope.Benchmark)
    public static class Peers {

        RateLimiter guava = RateLimiter.create(1e12);

        RateLimiter guavaReject = RateLimiter.create(1e-6);

        AtomicRateLimiter resilience4j = new AtomicRateLimiter("allow", RateLimiterConfig.custom()
                .limitForPeriod((int) 1e9).limitRefreshPeriod(Duration.ofSeconds(1)).timeoutDuration(Duration.ZERO)
                .build());

        AtomicRateLimiter resilience4jReject = new AtomicRateLimiter("reject", RateLimiterConfig.custom()
                .limitForPeriod(1).limitRefreshPeriod(Duration.ofHours(1)).timeoutDuration(Duration.ZERO).build());

        /** Bucket4j refills at most one token per nanosecond: a billion per second is never reached here. */
        Bucket bucket4j = neverEmpty();

        Bucket bucket4jReject = Bucket.builder().addLimit(Bandwidth.builder().capacity(1)
                .refillIntervally(1, Duration.ofHours(1)).build()).build();

        /** Sentinel's sliding window: 10 buckets over a second, checked and then added to. */
        ArrayMetric sentinel = new ArrayMetric(10, 1000);

        final Cache<String, Bucket> bucket4jPerKey = Caffeine.newBuilder().maximumSize(1_000_000).build();

        final ConcurrentHashMap<String, AtomicRateLimiter> resilience4jPerKey = new ConcurrentHashMap<>();

        final RateLimiterConfig perKeyConfig = RateLimiterConfig.custom().limitForPeriod((int) 1e9)
                .limitRefreshPeriod(Duration.ofSeconds(1)).timeoutDuration(Duration.ZERO).build();

        static Bucket neverEmpty() {
            return Bucket.builder().addLimit(Bandwidth.builder().capacity(1_000_000_000L)
                    .refillGreedy(1_000_000_000L, Duration.ofSeconds(1)).build()).build();
        }

        @Setup(Level.Trial)
        public void useUp() {
            this.guavaReject.tryAcquire();
            this.resilience4jReject.acquirePermission();
            this.bucket4jReject.tryConsume(1);
        }

    }

    // ---- ours

    @Benchmark
    public long counterAllow(Ours ours) {
        return ours.allowCounter.acquire(ours.now, 1, NEVER_REACHED);
    }

    @Benchmark
    public long counterReject(Ours ours) {
        return ours.rejectCounter.acquire(ours.now, 1, 1);
    }

    @Benchmark
    public Object counterDecisionAllow(Ours ours) {
        return ours.allowCounter.tryAcquire(ours.now, 1, NEVER_REACHED);
    }

    @Benchmark
    public Object counterDecisionReject(Ours ours) {
        return ours.rejectCounter.tryAcquire(ours.now, 1, 1);
    }

    @Benchmark
    public Object publicApiAllow(Ours ours) {
        return ours.rateLimiters.tryAcquire("allow", "k");
    }

    @Benchmark
    public Object publicApiReject(Ours ours) {
        return ours.rateLimiters.tryAcquire("reject", "k");
    }

    /** What callers do with a decision: read it. Nothing escapes, so the JIT may drop the object. */
    @Benchmark
    public boolean publicApiAllowRead(Ours ours) {
        return ours.rateLimiters.tryAcquire("allow", "k").allowed();
    }

    @Benchmark
    public boolean publicApiRejectRead(Ours ours) {
        return ours.rateLimiters.tryAcquire("reject", "k").allowed();
    }

    /** The verdict alone: what callers that need no more than yes or no can ask. */
    @Benchmark
    public boolean publicApiAdmit(Ours ours) {
        return ours.rateLimiters.admit("allow", "k");
    }

    @Benchmark
    public boolean publicApiAdmitReject(Ours ours) {
        return ours.rateLimiters.admit("reject", "k");
    }

    /** The second harness style: the same public API over objects made by hand, no Spring context. */
    @Benchmark
    public boolean bareApiAllowRead(Bare bare) {
        return bare.rateLimiters.tryAcquire("allow", "k").allowed();
    }

    @Benchmark
    public boolean bareApiRejectRead(Bare bare) {
        return bare.rateLimiters.tryAcquire("reject", "k").allowed();
    }

    @Benchmark
    public boolean annotatedAllowRead(Ours ours) {
        return ours.service.call("k") != null;
    }

    @Benchmark
    public Object publicApiAllow100kKeys(Ours ours, KeyCursor cursor) {
        return ours.rateLimiters.tryAcquire("allow", cursor.key());
    }

    /** The verdict alone over 100 000 keys: what the boolean peers below answer. */
    @Benchmark
    public boolean publicApiAdmit100kKeys(Ours ours, KeyCursor cursor) {
        return ours.rateLimiters.admit("allow", cursor.key());
    }

    @Benchmark
    public Object annotatedAllow(Ours ours) {
        return ours.service.call("k");
    }

    @Benchmark
    public Object annotatedChargedSame(Ours ours) {
        return ours.service.chargedSame("k");
    }

    @Benchmark
    public Object annotatedChargedLess(Ours ours) {
        return ours.service.chargedLess("k");
    }

    @Benchmark
    public Object noopAdvisedCall(Ours ours) {
        return ours.service.advised("k");
    }

    @Benchmark
    public Object unannotatedCall(Ours ours) {
        return ours.service.plain("k");
    }

    // ---- peers

    @Benchmark
    public boolean guavaAllow(Peers peers) {
        return peers.guava.tryAcquire();
    }

    @Benchmark
    public boolean guavaReject(Peers peers) {
        return peers.guavaReject.tryAcquire();
    }

    @Benchmark
    public boolean resilience4jAllow(Peers peers) {
        return peers.resilience4j.acquirePermission();
    }

    @Benchmark
    public boolean resilience4jReject(Peers peers) {
        return peers.resilience4jReject.acquirePermission();
    }

    @Benchmark
    public boolean bucket4jAllow(Peers peers) {
        return peers.bucket4j.tryConsume(1);
    }

    @Benchmark
    public boolean bucket4jReject(Peers peers) {
        return peers.bucket4jReject.tryConsume(1);
    }

    @Benchmark
    public boolean sentinelLeapArrayAllow(Peers peers) {
        if (peers.sentinel.pass() + 1 <= NEVER_REACHED) {
            peers.sentinel.addPass(1);
            return true;
        }
        return false;
    }

    @Benchmark
    public boolean bucket4jInCaffeine100kKeys(Peers peers, KeyCursor cursor) {
        return peers.bucket4jPerKey.get(cursor.key(), (key) -> Peers.neverEmpty()).tryConsume(1);
    }

    @Benchmark
    public boolean resilience4jRegistry100kKeys(Peers peers, KeyCursor cursor) {
        return peers.resilience4jPerKey.computeIfAbsent(cursor.key(),
                (key) -> new AtomicRateLimiter(key, peers.perKeyConfig)).acquirePermission();
    }

}
