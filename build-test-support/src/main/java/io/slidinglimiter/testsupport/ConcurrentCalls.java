package io.slidinglimiter.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many threads making the same kind of call at once, for the exactness tests.
 * <p>
 * Many threads making the same kind of call at once, for the exactness and fault tests of every
 * module: how many calls were admitted, how many threw, and the slowest call.
 *
 * @param admitted calls whose decision was allowed
 * @param failures calls that threw
 * @param slowestMillis the longest any one call took
 */
public record ConcurrentCalls(AtomicInteger admitted, AtomicInteger failures, AtomicLong slowestMillis) {

    /**
     * Runs {@code callsEach} calls on each of {@code threads} threads and waits for all of them.
     * @param threads the threads
     * @param callsEach the calls each thread makes; {@code call} gets the call's number
     * @param call one call
     * @return what happened
     */
    public static ConcurrentCalls run(int threads, int callsEach, Call call) throws Exception {
        ConcurrentCalls calls = new ConcurrentCalls(new AtomicInteger(), new AtomicInteger(), new AtomicLong());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int thread = 0; thread < threads; thread++) {
                int threadNumber = thread;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < callsEach; i++) {
                        long start = System.nanoTime();
                        try {
                            if (call.admitted(threadNumber, i)) {
                                calls.admitted.incrementAndGet();
                            }
                        }
                        catch (Exception ex) {
                            calls.failures.incrementAndGet();
                        }
                        calls.slowestMillis.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
                    }
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        }
        finally {
            pool.shutdown();
        }
        return calls;
    }

    /**
     * Runs calls that all decide the same way.
     * @param threads the threads
     * @param callsEach the calls each thread makes
     * @param call one call
     * @return what happened
     */
    public static ConcurrentCalls run(int threads, int callsEach, Callable<Boolean> call) throws Exception {
        return run(threads, callsEach, (thread, i) -> call.call());
    }

    /** One call of one thread. */
    @FunctionalInterface
    public interface Call {

        /**
         * Makes the call.
         * @param thread the thread's number
         * @param i the call's number in the thread
         * @return whether it was admitted
         */
        boolean admitted(int thread, int i) throws Exception;

    }

}
