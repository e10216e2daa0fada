package io.slidinglimiter.testsupport;

import java.lang.management.ManagementFactory;

/**
 * What a call allocates, counted by the JVM for the calling thread
 * ({@code getCurrentThreadAllocatedBytes}), not timed: one warm-up round, then the quietest of
 * {@value #ROUNDS} rounds of {@value #CALLS} calls. A call that allocates shows in every round, while
 * the JVM's own one-off work (linking a call site, a deoptimization) lands in one round at most.
 */
public final class ThreadAllocation {

    /** The calls of one round. */
    public static final int CALLS = 100_000;

    /** The rounds counted after the warm-up round. */
    public static final int ROUNDS = 3;

    /** The calls every measurement makes, the warm-up round's included. */
    public static final long TOTAL_CALLS = (ROUNDS + 1L) * CALLS;

    private ThreadAllocation() {
    }

    /**
     * Measures a call.
     * @param call the call, which answers yes or no so that its work cannot be dropped
     * @return the bytes per call of the quietest round, and how many calls answered yes
     * @throws Throwable what the call threw
     */
    public static Measured of(Call call) throws Throwable {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
                .getThreadMXBean();
        long yes = 0;
        for (int i = 0; i < CALLS; i++) {
            yes += call.answer() ? 1 : 0;
        }
        long fewest = Long.MAX_VALUE;
        for (int round = 0; round < ROUNDS; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < CALLS; i++) {
                yes += call.answer() ? 1 : 0;
            }
            fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
        }
        return new Measured((double) fewest / CALLS, yes);
    }

    /** One call to measure. */
    @FunctionalInterface
    public interface Call {

        /**
         * Makes the call once.
         * @return its answer
         * @throws Throwable what it threw
         */
        boolean answer() throws Throwable;

    }

    /**
     * @param bytesPerCall the bytes per call of the quietest round
     * @param answeredYes the calls, warm-up included, that answered yes
     */
    public record Measured(double bytesPerCall, long answeredYes) {
    }

}
