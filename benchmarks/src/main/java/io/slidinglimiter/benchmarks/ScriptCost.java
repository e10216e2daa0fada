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
 * other thread of this JVM takes the cores from Redis.
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
                    String stats = server.call((commands) -> commands.info("commandstats"));
                    double inScript = stats.lines().filter((line) -> line.startsWith("cmdstat_evalsha:"))
                            .mapToDouble((line) -> Double.parseDouble(line.replaceAll(".*,usec=([0-9]+),.*", "$1")))
                            .sum();
                    long made = (long) calls * size;
                    System.out.printf(Locale.ROOT, "%-6d %14.0f %20.2f %18.2f%n", size, made * 1e9 / elapsed,
                            inScript / made, cpu / 1e3 / made);
                }
            }
            finally {
                client.shutdown();
            }
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
