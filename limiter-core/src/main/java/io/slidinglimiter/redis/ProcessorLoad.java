package io.slidinglimiter.redis;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * Whether this machine's processors are all but saturated now: then a reply that comes late was
 * more likely read late by this busy application than answered late by Redis (the client's I/O
 * thread waits for a processor like every other thread). Read from the JVM's operating-system bean
 * at most every {@value #SAMPLE_MILLIS} ms, and only when a call is late; where the JVM does not
 * tell, never busy. A reading is the load since the one before: one that covers much more than
 * {@value #SAMPLE_MILLIS} ms (the first after a quiet time) says little of now, so it counts as
 * busy until a fresh one says otherwise.
 */
final class ProcessorLoad {

    /** The share of the processors in use from which the machine counts as busy. */
    static final double BUSY = 0.9;

    static final long SAMPLE_MILLIS = 100;

    private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS);

    private final com.sun.management.OperatingSystemMXBean system;

    private volatile long sampledAtNanos = System.nanoTime() - 2 * SAMPLE_NANOS;

    private volatile boolean busy;

    /** How long the last reading covered. */
    private volatile long measuredOverNanos = Long.MAX_VALUE;

    ProcessorLoad() {
        this.system = system();
        if (this.system != null) {
            // The first reading has nothing to compare with (it says 0): it starts the measure.
            this.system.getCpuLoad();
        }
    }

    private static com.sun.management.OperatingSystemMXBean system() {
        try {
            return (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean
                    bean) ? bean : null;
        }
        catch (LinkageError ex) {
            // No jdk.management module (a trimmed runtime, some native images): the load is not known.
            return null;
        }
    }

    /**
     * @param nowNanos {@link System#nanoTime()}
     * @return whether the processors were at least {@value #BUSY} busy over the last
     * {@value #SAMPLE_MILLIS} ms or so, or may have been (no reading covers that time alone yet)
     */
    boolean mayBeBusy(long nowNanos) {
        if (this.system == null) {
            return false;
        }
        if (nowNanos - this.sampledAtNanos >= SAMPLE_NANOS) {
            synchronized (this) {
                long since = nowNanos - this.sampledAtNanos;
                if (since >= SAMPLE_NANOS) {
                    this.busy = this.system.getCpuLoad() >= BUSY;
                    this.measuredOverNanos = since;
                    this.sampledAtNanos = nowNanos;
                }
            }
        }
        return this.busy || this.measuredOverNanos > 2 * SAMPLE_NANOS;
    }

}
