package io.slidinglimiter.benchmarks;

import java.io.IOException;
import java.util.List;

import io.slidinglimiter.testsupport.RedisServer;

/**
 * Places a load driver beside its redis-server on the machine's cores.
 * <p>
 * Where a load driver and its redis-server run: by default on the machine's cores together, as the
 * scheduler places them; with {@code --redis-own-core}, redis-server on the last core alone and this
 * JVM (its threads and the ones it starts later) on the others, as when Redis has a server of its
 * own. Linux only, through {@code taskset} (util-linux).
 */
final class Cores {

    static final String REDIS_OWN_CORE = "--redis-own-core";

    private Cores() {
    }

    /**
     * Puts redis-server on the last core and this JVM on the others when {@code args} hold
     * {@value #REDIS_OWN_CORE}; else leaves both where the scheduler puts them.
     * @param server the server started for the run
     * @param args the driver's arguments
     * @return how the cores are shared, for the run's heading
     */
    static String place(RedisServer server, String[] args) throws IOException, InterruptedException {
        if (!List.of(args).contains(REDIS_OWN_CORE)) {
            return "redis-server and this JVM share the machine's cores";
        }
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
