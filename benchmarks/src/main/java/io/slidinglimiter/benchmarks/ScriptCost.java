package io.slidinglimiter.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;

import io.slidinglimiter.redis.RedisScripts;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * What a decision costs Redis itself.
 * <p>
 * What a decision costs Redis alone and in batches: one caller sends our script with one decision
 * a call, then batches of 8, 32 and 64 (as the runner sends them under load), on random keys of a
 * limit never reached, and reads the time Redis spent inside the script ({@code INFO commandstats})
 * and the CPU the redis-server process used ({@code /proc}), per decision. One caller, so that no
 * other thread of this JVM takes the cores from Redis. Then a decision alone by how long ago its key's
 * last call was: 1 000 keys, each called once a round at a fixed time that moves on by 1 ms (the same
 * sub-window), 6 s (the next), 18 s (three on) or 61 s (past the window) a round.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.ScriptCost [decisions per size, default 200000]
 * [--redis-own-core]
 * </pre>
 * With {@code --redis-own-core} redis-server runs on a core of its own ({@link Cores}).
 */
public final class ScriptCost {

    private static final String[] DECISION = { "acquire", "", "", "0", "60000", "10", "1000000000", "1" };

    private ScriptCost() {
    }

    public static void main(String[] args) throws Exception {
        int decisions = (args.length > 0 && !args[0].startsWith("--")) ? Integer.parseInt(args[0]) : 200_000;
        try (RedisServer server = RedisServer.start()) {
            System.out.println(Cores.place(server, args));
            RedisClient client = RedisClient.create("redis://127.0.0.1:" + server.port());
            try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE)) {
                RedisCommands<byte[], byte[]> redis = connection.sync();
                String sha = redis.scriptLoad(RedisScripts.DECIDE.source().getBytes(StandardCharsets.UTF_8));
                SplittableRandom random = new SplittableRandom(1);
                System.out.printf(Locale.ROOT, "%-6s %14s %20s %18s%n", "batch", "decisions/s", "in script us/dec",
                        "Redis CPU us/dec");
                for (int size : new int[] { 1, 8, 32, 64, 1, 8, 32, 64 }) {
                    server.call((commands) -> commands.configResetstat());
                    long cpuBefore = RedisLoad.redisCpuNanos(server);
                    long start = System.nanoTime();
                    int calls = decisions / size;
                    for (int call = 0; call < calls; call++) {
                        byte[][][] message = message(size, random);
                        List<Object> reply = redis.evalsha(sha, ScriptOutputType.MULTI, message[0], message[1]);
                        checkAdmitted(reply, size);
                    }
                    long elapsed = System.nanoTime() - start;
                    long cpu = RedisLoad.redisCpuNanos(server) - cpuBefore;
                    double inScript = inScriptMicros(server);
                    long made = (long) calls * size;
                    System.out.printf(Locale.ROOT, "%-6d %14.0f %20.2f %18.2f%n", size, made * 1e9 / elapsed,
                            inScript / made, cpu / 1e3 / made);
                }
                bySchedule(server, redis, sha);
            }
            finally {
                client.shutdown();
            }
        }
    }

    /**
     * A decision alone by how far its key's last call was (a window of 60 s in sub-windows of 6 s), at
     * fixed times: the commands the script runs differ by that.
     */
    private static void bySchedule(RedisServer server, RedisCommands<byte[], byte[]> redis, String sha) throws Exception {
        System.out.printf(Locale.ROOT, "%n%-22s %20s %18s%n", "since the key's last", "in script us/dec", "Redis CPU us/dec");
        String[] names = { "same sub-window", "next sub-window", "three sub-windows on", "past the window" };
        long[] steps = { 1, 6_000, 18_000, 61_000 };
        int keys = 1_000;
        int rounds = 100;
        for (int repeat = 0; repeat < 2; repeat++) {
            for (int schedule = 0; schedule < steps.length; schedule++) {
                redis.flushall();
                long time = 1_700_000_004_000L;
                // The first round makes the keys; the others are measured.
                decideEach(redis, sha, keys, time);
                server.call((commands) -> commands.configResetstat());
                long cpuBefore = RedisLoad.redisCpuNanos(server);
                for (int round = 1; round < rounds; round++) {
                    time += steps[schedule];
                    decideEach(redis, sha, keys, time);
                }
                long cpu = RedisLoad.redisCpuNanos(server) - cpuBefore;
                double inScript = inScriptMicros(server);
                long made = (long) keys * (rounds - 1);
                System.out.printf(Locale.ROOT, "%-22s %20.2f %18.2f%n", names[schedule], inScript / made,
                        cpu / 1e3 / made);
            }
        }
    }

    /** @return the microseconds Redis spent in the script since the last {@code CONFIG RESETSTAT} */
    private static double inScriptMicros(RedisServer server) {
        String stats = server.call((commands) -> commands.info("commandstats"));
        return stats.lines().filter((line) -> line.startsWith("cmdstat_evalsha:"))
                .mapToDouble((line) -> Double.parseDouble(line.replaceAll(".*,usec=([0-9]+),.*", "$1"))).sum();
    }

    /** One decision alone for each key, at a fixed time. */
    private static void decideEach(RedisCommands<byte[], byte[]> redis, String sha, int keys, long time) {
        byte[][] args = new byte[DECISION.length][];
        for (int a = 0; a < DECISION.length; a++) {
            // ARGV[2]: the time a test fixes.
            args[a] = bytes((a == 1) ? Long.toString(time) : DECISION[a]);
        }
        for (int key = 0; key < keys; key++) {
            byte[][] keyName = { bytes("limiter:{client-" + key + "}:cost") };
            checkAdmitted(redis.evalsha(sha, ScriptOutputType.MULTI, keyName, args), 1);
        }
    }

    /** Fails the run unless every decision of a call's reply was made and admitted: a cost is only a cost of those. */
    private static void checkAdmitted(List<Object> reply, int size) {
        List<?> decisions = (size == 1) ? List.of(reply) : reply;
        for (Object decision : decisions) {
            if (!(decision instanceof List<?> values) || !Long.valueOf(1).equals(values.get(0))) {
                throw new IllegalStateException("A decision was not admitted: " + decision);
            }
        }
    }

    /**
     * The keys and arguments of one script call: one decision as it is, or a batch as the runner builds
     * it (batch.lua): the first decision's arguments whole, each later one's as "the previous but the
     * deadline" (-1) and its deadline.
     */
    private static byte[][][] message(int size, SplittableRandom random) {
        byte[][] keys = new byte[size][];
        for (int i = 0; i < size; i++) {
            keys[i] = bytes("limiter:{client-" + random.nextInt(100_000) + "}:cost");
        }
        if (size == 1) {
            byte[][] args = new byte[DECISION.length][];
            for (int a = 0; a < DECISION.length; a++) {
                args[a] = bytes(DECISION[a]);
            }
            return new byte[][][] { keys, args };
        }
        int header = 2 + 2 * size;
        byte[][] args = new byte[header + DECISION.length + (size - 1)][];
        args[0] = bytes("batch");
        args[1] = bytes(Integer.toString(size));
        for (int i = 0; i < size; i++) {
            args[2 + 2 * i] = bytes("1");
            args[3 + 2 * i] = bytes((i == 0) ? Integer.toString(DECISION.length) : "-1");
        }
        for (int a = 0; a < DECISION.length; a++) {
            args[header + a] = bytes(DECISION[a]);
        }
        for (int i = 1; i < size; i++) {
            args[header + DECISION.length + i - 1] = bytes(DECISION[2]);
        }
        return new byte[][][] { keys, args };
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

}
