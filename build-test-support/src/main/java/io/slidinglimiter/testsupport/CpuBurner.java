package io.slidinglimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Other processes that keep every core of the machine busy, as a noisy neighbour does: for tests of
 * what the limiter does on a host whose load it did not make. Each is a shell spinning in a loop,
 * two per core, started by {@link #start()} and ended by {@link #close()} (and by the JVM's exit).
 */
public final class CpuBurner implements AutoCloseable {

    private final List<Process> processes = new ArrayList<>();

    private CpuBurner() {
    }

    /**
     * Starts two spinning processes per processor this JVM sees.
     * @return the running burner
     */
    public static CpuBurner start() {
        CpuBurner burner = new CpuBurner();
        int count = 2 * Runtime.getRuntime().availableProcessors();
        try {
            for (int i = 0; i < count; i++) {
                Process process = new ProcessBuilder("sh", "-c", "while :; do :; done")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                burner.processes.add(process);
            }
        }
        catch (IOException ex) {
            burner.close();
            throw new UncheckedIOException("Could not start a process that keeps the processors busy", ex);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(burner::close));
        // Gives the spinning processes the time to take the processors.
        RedisServer.sleepMillis(200);
        return burner;
    }

    /** @return how many processes spin */
    public int processes() {
        return this.processes.size();
    }

    @Override
    public void close() {
        for (Process process : this.processes) {
            process.destroyForcibly();
        }
        for (Process process : this.processes) {
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

}
