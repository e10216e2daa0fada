package io.slidinglimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.FailurePolicy;
import io.slidinglimiter.redis.ResilientRedisBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.RedisScripts;
import io.slidinglimiter.redis.RedisServer;

/**
 * Decisions per second and latency of our Redis backend from one JVM, beside, on the same server
 * and keys: a bare Lettuce EVALSHA of our script with fixed arguments (what our Java layers add
 * shows against it), a bare Lettuce EVALSHA of a one-line HINCRBY script (the client's own
 * ceiling) and Bucket4j's Lettuce proxy manager. Starts its own redis-server (the one on PATH, else the binary
 * inside embedded-redis) on a free port.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.RedisLoad [seconds per run, default 5]
 * </pre>
 */
public final class RedisLoad {

    static final int KEYS = 100_000;

    private static final int[] THREADS = { 1, 16, 64 };

    private RedisLoad() {
    }

    interface Decider {

        boolean decide(int key) throws Exception;

    }

    public static void main(String[] args) throws Exception {
        int seconds = (args.length > 0) ? Integer.parseInt(args[0]) : 5;
        try (RedisServer server = RedisServer.start()) {
            LettuceConnectionFactory factory = new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration("127.0.0.1", server.port()));
            factory.afterPropertiesSet();
            factory.start();
            RedisBackend ours = new RedisBackend(new LettuceScriptRunner(factory, Duration.ofSeconds(5)),
                    new RedisKeys("limiter"), null);
            // What applications get: the failure policy, breaker and denial cache over a runner with the
            // default 100 ms timeout, its connection opened and script loaded as at start.
            LettuceScriptRunner wiredRunner = new LettuceScriptRunner(factory, Duration.ofMillis(100));
            wiredRunner.connect().get();
            ResilientRedisBackend wired = new ResilientRedisBackend(new RedisBackend(wiredRunner,
                    new RedisKeys("limiter"), null), new LocalBackend(TimeSource.ticking(), 1_000_000),
                    new ResilientRedisBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 100_000),
                    TimeSource.ticking(), (ignored) -> { });
            LimitDefinition limit = LimitDefinition.of("bench", 1_000_000_000L, Duration.ofSeconds(1), 10);
            String[] keys = new String[KEYS];
            byte[][] rawKeys = new byte[KEYS][];
            for (int i = 0; i < KEYS; i++) {
                keys[i] = "client-" + i;
                rawKeys[i] = ("plain:{client-" + i + "}").getBytes(StandardCharsets.UTF_8);
            }

            RedisClient client = RedisClient.create("redis://127.0.0.1:" + server.port());
            StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
            RedisAsyncCommands<byte[], byte[]> async = connection.async();
            String trivial = "return redis.call('HINCRBY', KEYS[1], 'n', 1)";
            String trivialSha = connection.sync().scriptLoad(trivial.getBytes(StandardCharsets.UTF_8));

            ProxyManager<byte[]> bucket4j = Bucket4jLettuce.casBasedBuilder(connection)
                    .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                            Duration.ofSeconds(10)))
                    .build();
            BucketConfiguration bucketConfiguration = BucketConfiguration.builder()
                    .addLimit(Bandwidth.builder().capacity(1_000_000_000L)
                            .refillGreedy(1_000_000_000L, Duration.ofSeconds(1)).build())
                    .build();
            byte[][] bucketKeys = new byte[KEYS][];
            for (int i = 0; i < KEYS; i++) {
                bucketKeys[i] = ("bucket4j:" + i).getBytes(StandardCharsets.UTF_8);
            }

            String decideSha = connection.sync().scriptLoad(RedisScripts.DECIDE.source().getBytes(StandardCharsets.UTF_8));
            byte[][] decideArgs = Stream.of("acquire", "", "", "0", "1000", "10", "1000000000", "1")
                    .map((arg) -> arg.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
            byte[][] bareKeys = new byte[KEYS][];
            for (int i = 0; i < KEYS; i++) {
                bareKeys[i] = ("bare:{client-" + i + "}:bench").getBytes(StandardCharsets.UTF_8);
            }

            System.out.printf(Locale.ROOT, "%-22s %8s %12s %9s %9s %14s %14s %12s%n", "driver", "threads",
                    "decisions/s", "p50 us", "p99 us", "JVM CPU us/op", "Redis CPU us/op", "in Redis %");
            for (int threads : THREADS) {
                run("ours (RedisBackend)", threads, seconds, server,
                        (key) -> ours.tryAcquire(limit, keys[key], 1).allowed());
                run("ours, wired (100 ms)", threads, seconds, server,
                        (key) -> wired.tryAcquire(limit, keys[key], 1).allowed());
                run("lettuce EVALSHA ours", threads, seconds, server, (key) -> async
                        .<List<Long>>evalsha(decideSha, ScriptOutputType.MULTI, new byte[][] { bareKeys[key] },
                                decideArgs)
                        .get(5, TimeUnit.SECONDS).get(0) == 1);
                run("lettuce EVALSHA", threads, seconds, server, (key) -> async
                        .<Long>evalsha(trivialSha, ScriptOutputType.INTEGER, new byte[][] { rawKeys[key] })
                        .get(5, TimeUnit.SECONDS) > 0);
                run("bucket4j lettuce", threads, seconds, server,
                        (key) -> bucket4j.builder().build(bucketKeys[key], () -> bucketConfiguration).tryConsume(1));
            }
            System.out.println("script sha1 for redis-benchmark: " + RedisScripts.DECIDE.sha1());
            printMemoryUsage(server, ours, limit);
            connection.close();
            client.shutdown();
            factory.destroy();
        }
    }

    static void run(String name, int threads, int seconds, RedisServer server, Decider decider)
            throws Exception {
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        long[][] latencies = new long[threads][];
        int[] counts = new int[threads];
        // Every decision of the run, warm-up included, against every script Redis ran meanwhile: the
        // share that reached Redis, exactly (nothing is in flight before the start or after the end).
        long[] made = new long[threads];
        long scriptsBefore = server.scriptCalls();
        CountDownLatch done = new CountDownLatch(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            latencies[t] = new long[4_000_000 / threads];
            Thread worker = new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                try {
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        decider.decide(random.nextInt(KEYS));
                        long took = System.nanoTime() - start;
                        made[index]++;
                        if (measuring.get() && counts[index] < latencies[index].length) {
                            latencies[index][counts[index]++] = took;
                        }
                    }
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
                finally {
                    done.countDown();
                }
            });
            worker.start();
            workers.add(worker);
        }
        Thread.sleep(2_000);
        long jvmCpuBefore = jvmCpuNanos();
        long redisCpuBefore = redisCpuNanos(server);
        long startNanos = System.nanoTime();
        measuring.set(true);
        Thread.sleep(seconds * 1_000L);
        measuring.set(false);
        long elapsed = System.nanoTime() - startNanos;
        long jvmCpu = jvmCpuNanos() - jvmCpuBefore;
        long redisCpu = redisCpuNanos(server) - redisCpuBefore;
        stop.set(true);
        done.await();
        long scripts = server.scriptCalls() - scriptsBefore;
        long total = Arrays.stream(counts).sum();
        long[] all = new long[(int) total];
        int at = 0;
        for (int t = 0; t < threads; t++) {
            System.arraycopy(latencies[t], 0, all, at, counts[t]);
            at += counts[t];
        }
        Arrays.sort(all);
        System.out.printf(Locale.ROOT, "%-22s %8d %12.0f %9.0f %9.0f %14.1f %14.1f %12.2f%n", name, threads,
                total * 1e9 / elapsed, all[all.length / 2] / 1e3, all[(int) (all.length * 0.99)] / 1e3,
                jvmCpu / 1e3 / total, redisCpu / 1e3 / total, 100.0 * scripts / Arrays.stream(made).sum());
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

    private static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** utime + stime of the redis-server process, from /proc, in nanoseconds (clock ticks of 10 ms). */
    private static long redisCpuNanos(RedisServer server) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + server.pid() + "/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10_000_000L;
    }

}
