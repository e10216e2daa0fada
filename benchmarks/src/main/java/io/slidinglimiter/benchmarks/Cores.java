package io.slidinglimiter.benchmarks;

import java.io.IOException;

import io.slidinglimiter.testsupport.RedisServer;

/**
 * Where a load driver and its redis-server run: by default on the machine's cores together, as the
 * scheduler places them; with {@code --redis-own-core}, redis-server on the last core alone and this
 * JVM (its threads and the ones it starts later) on the others, as when Redis has a server of its
 * own. Linux only, through {@code taskset} (util-linux).
 */
final class Cores {

    static final String REDIS_OWN_CORE = "--redis-own-core";

    private Cores() {
    }

    /** @return whether {@code args} asks for Redis on a core of its own */
    static boolean redisOwnCore(String[] args) {
        for (String arg : args) {
            if (REDIS_OWN_CORE.equals(arg)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Puts redis-server on the last core and this JVM on the others.
     * @param server the server started for the run
     * @return how the cores were shared, for the run's heading
     */
    static String separate(RedisServer server) throws IOException, InterruptedException {
        int cores = Runtime.getRuntime().availableProcessors();
        if (cores < 2) {
            throw new IllegalStateException(REDIS_OWN_CORE + " needs two cores or more; this JVM sees " + cores);
        }
        String last = Integer.toString(cores - 1);
        String others = (cores == 2) ? "0" : "0-" + (cores - 2);
        taskset(others, ProcessHandle.current().pid());
        taskset(last, server.pid());
        return "redis-server on core " + last + " alone, this JVM on core(s) " + others;
    }

    private static void taskset(String cores, long pid) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("taskset", "--all-tasks", "--cpu-list", "--pid", cores, Long.toString(pid))
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IllegalStateException("taskset could not move process " + pid + " to core(s) " + cores + ": "
                    + output.strip());
        }
    }

}
