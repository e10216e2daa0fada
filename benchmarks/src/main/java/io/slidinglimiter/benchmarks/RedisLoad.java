package io.slidinglimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
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
import io.slidinglimiter.redis.RedisScripts;
import io.slidinglimiter.redis.ResilientRedisBackend;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * Decisions per second of our Redis backend from one JVM, against bare calls on the same server.
 * <p>
 * Decisions per second and latency of our Redis backend from one JVM, beside, on the same server
 * and keys: a bare Lettuce EVALSHA of our script with fixed arguments (what our Java layers add
 * shows against it), a bare Lettuce EVALSHA of a one-line HINCRBY script (the client's own
 * ceiling) and Bucket4j's Lettuce proxy manager. Starts its own redis-server (the one on PATH, else
 * the binary
 * inside embedded-redis) on a free port.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.RedisLoad [seconds per run, default 5] [--redis-own-core]
 * </pre>
 * With {@code --redis-own-core} redis-server runs on a core of its own and the drivers on the
 * others ({@link Cores}).
 */
public final class RedisLoad {

    static final int KEYS = 100_000;

    private static final int[] THREADS = { 1, 16, 64 };

    private RedisLoad() {
    }

    /** The callers to measure: {@code -Dredisload.callers=1,16} for some of 1, 16 and 64. */
    private static int[] callers() {
        String only = System.getProperty("redisload.callers");
        return (only == null) ? THREADS
                : java.util.Arrays.stream(only.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    /**
     * How many times each caller count runs the selected drivers in turn, in one JVM:
     * {@code -Dredisload.rounds=6} for pairs that share the JIT's and the heap's state (default 1).
     */
    private static int rounds() {
        return Integer.getInteger("redisload.rounds", 1);
    }

    /** Whether to measure a driver: {@code -Dredisload.drivers=batched,EVALSHA ours} for the ones named so. */
    private static boolean selected(String driver) {
        String only = System.getProperty("redisload.drivers");
        // "batched" names "ours, wired, batched", not "ours, wired, unbatched": a whole last word.
        return only == null
                || java.util.Arrays.stream(only.split(",")).anyMatch((name) -> driver.endsWith(" " + name));
    }

    interface Decider {

        boolean decide(int key) throws Exception;

    }

    public static void main(String[] args) throws Exception {
        int seconds = (args.length > 0 && !args[0].startsWith("--")) ? Integer.parseInt(args[0]) : 5;
        try (RedisServer server = RedisServer.start(); Drivers drivers = new Drivers(server)) {
            System.out.println(Cores.place(server, args));
            System.out.printf(Locale.ROOT, "%-22s %8s %12s %9s %9s %14s %14s %12s %11s%n", "driver", "threads",
                    "decisions/s", "p50 us", "p99 us", "JVM CPU us/op", "Redis CPU us/op", "in Redis %", "JVM B/op");
            warmUp(drivers);
            for (int threads : callers()) {
                for (int round = 0; round < rounds(); round++) {
                    runSelected(threads, seconds, server, drivers);
                }
            }
            System.out.println("script sha1 for redis-benchmark: " + RedisScripts.DECIDE.sha1());
            printMemoryUsage(server, drivers.ours, drivers.limit);
        }
    }

    /** Runs each selected driver once with {@code threads} callers, in the table's order. */
    private static void runSelected(int threads, int seconds, RedisServer server, Drivers drivers) throws Exception {
        if (selected("ours, wired, batched")) {
            run("ours, wired, batched", threads, seconds, server, drivers.wired(), drivers.wiredRunner);
        }
        if (selected("ours, wired, unbatched")) {
            run("ours, wired, unbatched", threads, seconds, server, drivers.unbatched(), null);
        }
        if (selected("lettuce EVALSHA ours")) {
            run("lettuce EVALSHA ours", threads, seconds, server, drivers.evalshaOurs(), null);
        }
        if (selected("lettuce EVALSHA")) {
            run("lettuce EVALSHA", threads, seconds, server, drivers.evalshaTrivial(), null);
        }
        if (selected("bucket4j lettuce")) {
            run("bucket4j lettuce", threads, seconds, server, drivers.bucket4j(), null);
        }
    }

    /**
     * Runs every driver, unmeasured, with one caller and with sixteen, so that the first one measured
     * does not pay for compiling the paths they share (Lettuce's, Netty's): without, the batched
     * driver, measured first, decided a fifth to a third less than the others with one caller, and
     * as much as they did when the order was alternated.
     */
    private static void warmUp(Drivers drivers) throws InterruptedException {
        for (int threads : new int[] { 1, 16 }) {
            for (Decider decider : List.of(drivers.wired(), drivers.unbatched(), drivers.evalshaOurs(),
                    drivers.evalshaTrivial(), drivers.bucket4j())) {
                Workers workers = new Workers(threads, 16, decider, () -> ThreadLocalRandom.current().nextInt(KEYS));
                Thread.sleep(2_000);
                workers.stop();
            }
        }
    }

    /**
     * The deciders RedisLoad and Charts drive on one server: ours bare and as applications get it,
     * a bare Lettuce EVALSHA of our script and of a one-line script, and Bucket4j's Lettuce proxy.
     */
    static final class Drivers implements AutoCloseable {

        final RedisBackend ours;

        final LimitDefinition limit = LimitDefinition.of("bench", 1_000_000_000L, Duration.ofSeconds(1), 10);

        private final LettuceConnectionFactory factory;

        private final ResilientRedisBackend wired;

        /** The runner of {@link #wired}: its batches turn script calls into decisions. */
        final LettuceScriptRunner wiredRunner;

        private final ResilientRedisBackend unbatched;

        private final String[] keys = new String[KEYS];

        private final byte[][] rawKeys = new byte[KEYS][];

        private final byte[][] bareKeys = new byte[KEYS][];

        private final byte[][] bucketKeys = new byte[KEYS][];

        private final RedisClient client;

        private final StatefulRedisConnection<byte[], byte[]> connection;

        private final RedisAsyncCommands<byte[], byte[]> async;

        private final String trivialSha;

        private final String decideSha;

        private final byte[][] decideArgs;

        private final ProxyManager<byte[]> bucket4j;

        private final BucketConfiguration bucketConfiguration;

        Drivers(RedisServer server) throws Exception {
            this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port()));
            this.factory.afterPropertiesSet();
            this.factory.start();
            this.ours = new RedisBackend(new LettuceScriptRunner(this.factory, Duration.ofSeconds(5)),
                    new RedisKeys("limiter"), null);
            // What applications get: the failure policy, breaker and denial cache over a runner with the
            // default 100 ms timeout, its connection opened and script loaded as at start; batching on
            // (the default) or off (limiter.redis.batching=false).
            this.wiredRunner = new LettuceScriptRunner(this.factory, Duration.ofMillis(100));
            this.wired = wired(this.wiredRunner);
            LettuceScriptRunner unbatchedRunner = new LettuceScriptRunner(this.factory, Duration.ofMillis(100));
            unbatchedRunner.setBatching(false);
            this.unbatched = wired(unbatchedRunner);
            for (int i = 0; i < KEYS; i++) {
                this.keys[i] = "client-" + i;
                this.rawKeys[i] = ("plain:{client-" + i + "}").getBytes(StandardCharsets.UTF_8);
                this.bareKeys[i] = ("bare:{client-" + i + "}:bench").getBytes(StandardCharsets.UTF_8);
                this.bucketKeys[i] = ("bucket4j:" + i).getBytes(StandardCharsets.UTF_8);
            }
            this.client = RedisClient.create("redis://127.0.0.1:" + server.port());
            this.connection = this.client.connect(ByteArrayCodec.INSTANCE);
            this.async = this.connection.async();
            String trivial = "return redis.call('HINCRBY', KEYS[1], 'n', 1)";
            this.trivialSha = this.connection.sync().scriptLoad(trivial.getBytes(StandardCharsets.UTF_8));
            this.decideSha = this.connection.sync()
                    .scriptLoad(RedisScripts.DECIDE.source().getBytes(StandardCharsets.UTF_8));
            this.decideArgs = Stream.of("acquire", "", "", "0", "1000", "10", "1000000000", "1")
                    .map((arg) -> arg.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
            this.bucket4j = Bucket4jLettuce.casBasedBuilder(this.connection)
                    .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                            Duration.ofSeconds(10)))
                    .build();
            this.bucketConfiguration = BucketConfiguration.builder()
                    .addLimit(Bandwidth.builder().capacity(1_000_000_000L)
                            .refillGreedy(1_000_000_000L, Duration.ofSeconds(1)).build())
                    .build();
        }

        private static ResilientRedisBackend wired(LettuceScriptRunner runner) throws Exception {
            runner.connect().get();
            return new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"), null),
                    new LocalBackend(TimeSource.ticking(), 1_000_000),
                    new ResilientRedisBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 100_000),
                    TimeSource.ticking(), (ignored) -> { });
        }

        Decider wired() {
            return (key) -> this.wired.tryAcquire(this.limit, this.keys[key], 1).allowed();
        }

        Decider unbatched() {
            return (key) -> this.unbatched.tryAcquire(this.limit, this.keys[key], 1).allowed();
        }

        Decider evalshaOurs() {
            return (key) -> this.async.<List<Long>>evalsha(this.decideSha, ScriptOutputType.MULTI,
                    new byte[][] { this.bareKeys[key] }, this.decideArgs).get(5, TimeUnit.SECONDS).get(0) == 1;
        }

        Decider evalshaTrivial() {
            return (key) -> this.async.<Long>evalsha(this.trivialSha, ScriptOutputType.INTEGER,
                    new byte[][] { this.rawKeys[key] }).get(5, TimeUnit.SECONDS) > 0;
        }

        Decider bucket4j() {
            return (key) -> this.bucket4j.builder().build(this.bucketKeys[key], () -> this.bucketConfiguration)
                    .tryConsume(1);
        }

        @Override
        public void close() {
            this.connection.close();
            this.client.shutdown();
            this.factory.destroy();
        }

    }

    /**
     * Drives {@code decider} from {@code threads} threads for two seconds of warm-up and then
     * {@code seconds}, and prints one row.
     * @return the decisions per second measured
     */
    static double run(String name, int threads, int seconds, RedisServer server, Decider decider) throws Exception {
        return run(name, threads, seconds, server, decider, null);
    }

    /**
     * {@link #run(String, int, int, RedisServer, Decider)}, counting the decisions in Redis of a
     * runner that batches them.
     * @param batching the runner whose batches the script calls carried, or null for one call a decision
     * @return the decisions per second measured
     */
    static double run(String name, int threads, int seconds, RedisServer server, Decider decider,
            LettuceScriptRunner batching) throws Exception {
        // Each driver on an empty server: keys the previous driver left would still be expiring, on
        // the same two cores, during this one's run.
        server.call((redis) -> redis.flushall());
        // Every decision of the run, warm-up included, against every decision Redis made meanwhile
        // (script calls, a batch counting as its decisions): the share that reached Redis, exactly
        // (nothing is in flight before the start or after the end).
        long scriptsBefore = server.scriptCalls();
        long batchesBefore = (batching != null) ? batching.batchesSent() : 0;
        long batchedBefore = (batching != null) ? batching.batchedDecisions() : 0;
        Workers workers = new Workers(threads, 4_000_000, decider, () -> ThreadLocalRandom.current().nextInt(KEYS));
        Thread.sleep(2_000);
        long jvmCpuBefore = jvmCpuNanos();
        long allocatedBefore = jvmAllocatedBytes();
        long redisCpuBefore = redisCpuNanos(server);
        long startNanos = System.nanoTime();
        workers.measuring.set(true);
        Thread.sleep(seconds * 1_000L);
        workers.measuring.set(false);
        long elapsed = System.nanoTime() - startNanos;
        long jvmCpu = jvmCpuNanos() - jvmCpuBefore;
        long allocated = jvmAllocatedBytes() - allocatedBefore;
        long redisCpu = redisCpuNanos(server) - redisCpuBefore;
        long[] all = workers.stop();
        long scripts = server.scriptCalls() - scriptsBefore;
        // A batch is one script call for the decisions it carried.
        long batches = (batching != null) ? batching.batchesSent() - batchesBefore : 0;
        long batched = (batching != null) ? batching.batchedDecisions() - batchedBefore : 0;
        long inRedis = scripts - batches + batched;
        long total = all.length;
        double perSecond = total * 1e9 / elapsed;
        System.out.printf(Locale.ROOT, "%-22s %8d %12.0f %9.0f %9.0f %14.1f %14.1f %12.2f %11.0f%n", name, threads,
                perSecond, all[all.length / 2] / 1e3, all[(int) (all.length * 0.99)] / 1e3,
                jvmCpu / 1e3 / total, redisCpu / 1e3 / total, 100.0 * inRedis / workers.made(),
                allocated / (double) total);
        if (batching != null) {
            System.out.printf(Locale.ROOT, "%-22s %8s %d script calls for %d decisions in Redis, %d of them batches of"
                    + " %.1f on average%n", "", "", scripts, inRedis, batches, batched / (double) Math.max(1, batches));
        }
        return perSecond;
    }

    /**
     * Threads that call a decider until stopped: each counts every call, and keeps the latencies of
     * the calls made while {@link #measuring}.
     */
    static final class Workers {

        final AtomicBoolean measuring = new AtomicBoolean();

        private final AtomicBoolean stop = new AtomicBoolean();

        private final long[][] latencies;

        private final int[] counts;

        private final long[] made;

        private final CountDownLatch done;

        Workers(int threads, int latencySamples, Decider decider, IntSupplier key) {
            this.latencies = new long[threads][latencySamples / threads];
            this.counts = new int[threads];
            this.made = new long[threads];
            this.done = new CountDownLatch(threads);
            for (int t = 0; t < threads; t++) {
                int index = t;
                new Thread(() -> {
                    try {
                        while (!this.stop.get()) {
                            long start = System.nanoTime();
                            decider.decide(key.getAsInt());
                            long took = System.nanoTime() - start;
                            this.made[index]++;
                            if (this.measuring.get() && this.counts[index] < this.latencies[index].length) {
                                this.latencies[index][this.counts[index]++] = took;
                            }
                        }
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                    finally {
                        this.done.countDown();
                    }
                }).start();
            }
        }

        /** @return the calls made so far (read racily while running; exact after {@link #stop}) */
        long made() {
            return Arrays.stream(this.made).sum();
        }

        /** Stops every thread and waits for them; @return every measured latency, sorted */
        long[] stop() throws InterruptedException {
            this.stop.set(true);
            this.done.await();
            long[] all = new long[Arrays.stream(this.counts).sum()];
            int at = 0;
            for (int t = 0; t < this.counts.length; t++) {
                System.arraycopy(this.latencies[t], 0, all, at, this.counts[t]);
                at += this.counts[t];
            }
            Arrays.sort(all);
            return all;
        }

    }

    /** Bytes per key of each algorithm, as Redis's MEMORY USAGE reports them: every slot used, 100 permits logged. */
    private static void printMemoryUsage(RedisServer server, RedisBackend ours, LimitDefinition counter) {
        server.call((redis) -> redis.flushall());
        LimitDefinition log = new LimitDefinition("bench-log", 100, Duration.ofSeconds(60), 1,
                io.slidinglimiter.core.Algorithm.SLIDING_LOG);
        for (int slot = 0; slot < 10; slot++) {
            ours.tryAcquire(counter, "memory", 1);
            try {
                Thread.sleep(counter.windowMillis() / counter.subWindows());
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        for (int permit = 0; permit < 100; permit++) {
            ours.tryAcquire(log, "memory", 1);
        }
        server.call((redis) -> {
            for (String key : redis.keys("limiter:*")) {
                System.out.println("MEMORY USAGE " + key + ": " + redis.memoryUsage(key) + " bytes");
            }
            return null;
        });
    }

    /** Bytes every live thread of this JVM allocated so far (the workers', Lettuce's, Netty's). */
    private static long jvmAllocatedBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
                .getThreadMXBean();
        long sum = 0;
        for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            sum += Math.max(0, bytes);
        }
        return sum;
    }

    private static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** utime + stime of the redis-server process, from /proc, in nanoseconds (clock ticks of 10 ms). */
    static long redisCpuNanos(RedisServer server) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + server.pid() + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10_000_000L;
    }

}
