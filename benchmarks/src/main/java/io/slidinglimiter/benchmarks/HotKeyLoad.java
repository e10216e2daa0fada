package io.slidinglimiter.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.ResilientRedisBackend;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * Decisions per second on one hot key of Redis, ours against the peers.
 * <p>
 * One hot key from one and from two JVMs (issue "Leases"): the wired Redis backend as applications
 * get it (100 ms timeout, failure policy, breaker, denial cache) with and without leases, beside
 * Bucket4j's Lettuce proxy manager and a bare Lettuce {@code EVALSHA} of a one-line {@code HINCRBY}
 * script (the ceiling of any one-round-trip design), all on the same key of one redis-server that
 * this starts. A second JVM runs the same driver at the same time, started by this one. The limit
 * is never reached. "In Redis %" is the scripts Redis ran ({@code INFO commandstats}) over every
 * decision both JVMs made, warm-up included.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.HotKeyLoad [seconds per run, default 5]
 * </pre>
 */
public final class HotKeyLoad {

    private static final String[] DRIVERS = { "ours, no lease", "ours, lease", "lettuce EVALSHA", "bucket4j lettuce" };

    private static final long WARM_UP_MILLIS = 2_000;

    private HotKeyLoad() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(args);
            return;
        }
        int seconds = (args.length > 0) ? Integer.parseInt(args[0]) : 5;
        try (RedisServer server = RedisServer.start()) {
            System.out.printf(Locale.ROOT, "%-18s %5s %8s %14s %9s %9s %12s%n", "driver", "JVMs", "threads",
                    "decisions/s", "p50 us", "p99 us", "in Redis %");
            for (int threads : new int[] { 16, 64 }) {
                for (String driver : DRIVERS) {
                    for (int jvms = 1; jvms <= 2; jvms++) {
                        row(server, driver, jvms, threads, seconds);
                    }
                }
            }
        }
    }

    private static void row(RedisServer server, String driver, int jvms, int threads, int seconds) throws Exception {
        server.call((redis) -> redis.flushall());
        long scriptsBefore = server.scriptCalls();
        long startAt = System.currentTimeMillis() + ((jvms > 1) ? 3_000 : 200);
        Process child = null;
        if (jvms > 1) {
            child = new ProcessBuilder(System.getProperty("java.home") + "/bin/java", "-cp",
                    System.getProperty("java.class.path"), HotKeyLoad.class.getName(), "--child",
                    Integer.toString(server.port()), driver, Integer.toString(threads), Integer.toString(seconds),
                    Long.toString(startAt)).redirectErrorStream(true).start();
        }
        Result own;
        try (Deciders deciders = new Deciders(server.port())) {
            own = run(deciders.get(driver), threads, seconds, startAt);
        }
        Result other = null;
        if (child != null) {
            try (BufferedReader output = new BufferedReader(
                    new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = output.readLine()) != null) {
                    if (line.startsWith("RESULT ")) {
                        other = Result.parse(line);
                    }
                }
            }
            child.waitFor(60, TimeUnit.SECONDS);
        }
        long scripts = server.scriptCalls() - scriptsBefore;
        double perSecond = own.perSecond() + ((other != null) ? other.perSecond() : 0);
        long made = own.made() + ((other != null) ? other.made() : 0);
        System.out.printf(Locale.ROOT, "%-18s %5d %8d %14.0f %9.1f %9.1f %12.3f%n", driver, jvms, threads,
                perSecond, own.p50Micros(), own.p99Micros(), 100.0 * scripts / made);
    }

    private static void child(String[] args) throws Exception {
        int port = Integer.parseInt(args[1]);
        try (Deciders deciders = new Deciders(port)) {
            Result result = run(deciders.get(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Long.parseLong(args[5]));
            System.out.println("RESULT " + result.made() + " " + result.perSecond() + " " + result.p50Micros() + " "
                    + result.p99Micros());
        }
    }

    /**
     * Decisions of {@code threads} threads from {@code startAtMillis} (wall clock, so that two JVMs
     * start together): a warm-up, then {@code seconds} measured.
     */
    private static Result run(RedisLoad.Decider decider, int threads, int seconds, long startAtMillis)
            throws Exception {
        RedisLoad.Workers workers = new RedisLoad.Workers(threads, 8_000_000, decider, () -> 0);
        sleepUntil(startAtMillis + WARM_UP_MILLIS);
        long startNanos = System.nanoTime();
        long before = workers.made();
        workers.measuring.set(true);
        sleepUntil(startAtMillis + WARM_UP_MILLIS + seconds * 1_000L);
        workers.measuring.set(false);
        long measured = workers.made() - before;
        long elapsed = System.nanoTime() - startNanos;
        long[] all = workers.stop();
        return new Result(workers.made(), measured * 1e9 / elapsed, all[all.length / 2] / 1e3,
                all[(int) (all.length * 0.99)] / 1e3);
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        long wait = epochMillis - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    private record Result(long made, double perSecond, double p50Micros, double p99Micros) {

        static Result parse(String line) {
            String[] parts = line.split(" ");
            return new Result(Long.parseLong(parts[1]), Double.parseDouble(parts[2]), Double.parseDouble(parts[3]),
                    Double.parseDouble(parts[4]));
        }

    }

    /** The four deciders on one hot key of the server at {@code port}. */
    private static final class Deciders implements AutoCloseable {

        private final LimitDefinition limit = LimitDefinition.of("hot", 1_000_000_000L, Duration.ofSeconds(1), 10);

        private final LettuceConnectionFactory factory;

        private final RedisClient client;

        private final StatefulRedisConnection<byte[], byte[]> connection;

        private final List<ResilientRedisBackend> backends = new ArrayList<>();

        Deciders(int port) {
            this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
            this.factory.afterPropertiesSet();
            this.factory.start();
            this.client = RedisClient.create("redis://127.0.0.1:" + port);
            this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
        }

        RedisLoad.Decider get(String driver) throws Exception {
            return switch (driver) {
                case "ours, no lease" -> wired(false);
                case "ours, lease" -> wired(true);
                case "lettuce EVALSHA" -> evalsha();
                case "bucket4j lettuce" -> bucket4j();
                default -> throw new IllegalArgumentException(driver);
            };
        }

        /** The resilient backend over a 100 ms runner, its connection opened and script loaded as at start. */
        private RedisLoad.Decider wired(boolean lease) throws Exception {
            LettuceScriptRunner runner = new LettuceScriptRunner(this.factory, Duration.ofMillis(100));
            runner.connect().get();
            ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"),
                    null), new LocalBackend(TimeSource.monotonic(), 1_000_000),
                    new ResilientRedisBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 100_000,
                            lease ? (name) -> true : null), TimeSource.monotonic(), (ignored) -> {
                            });
            this.backends.add(backend);
            return (key) -> backend.tryAcquire(this.limit, "hot", 1).allowed();
        }

        private RedisLoad.Decider evalsha() {
            String sha = this.connection.sync()
                    .scriptLoad("return redis.call('HINCRBY', KEYS[1], 'n', 1)".getBytes(StandardCharsets.UTF_8));
            byte[][] keys = { "plain:{hot}".getBytes(StandardCharsets.UTF_8) };
            return (key) -> this.connection.async().<Long>evalsha(sha, ScriptOutputType.INTEGER, keys)
                    .get(5, TimeUnit.SECONDS) > 0;
        }

        private RedisLoad.Decider bucket4j() {
            ProxyManager<byte[]> proxy = Bucket4jLettuce.casBasedBuilder(this.connection)
                    .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                            Duration.ofSeconds(10)))
                    .build();
            BucketConfiguration configuration = BucketConfiguration.builder()
                    .addLimit(Bandwidth.builder().capacity(1_000_000_000L)
                            .refillGreedy(1_000_000_000L, Duration.ofSeconds(1)).build())
                    .build();
            byte[] key = "bucket4j:hot".getBytes(StandardCharsets.UTF_8);
            return (ignored) -> proxy.builder().build(key, () -> configuration).tryConsume(1);
        }

        @Override
        public void close() {
            this.backends.forEach(ResilientRedisBackend::close);
            this.connection.close();
            this.client.shutdown();
            this.factory.destroy();
        }

    }

}
