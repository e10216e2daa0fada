package io.slidinglimiter.core;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The statistics' count: exact whether a thread adds in a cell of its own or, its cell owned by
 * another thread, in the shared adder; never lower than before while threads add; nothing allocated
 * per addition.
 */
class PerThreadCountTests {

    @Test
    @Timeout(60)
    void threadsThatOutnumberTheCellsAreEachCountedExactly() throws Exception {
        PerThreadCount count = new PerThreadCount();
        int threads = 3 * PerThreadCount.CELLS + 8;
        addConcurrently(count, threads, 20_000);
        assertThat(count.sum()).isEqualTo(threads * 20_000L);
    }

    @Test
    @Timeout(60)
    void withOneCellEveryOtherThreadAddsToTheSharedAdderAndNoneIsLost() throws Exception {
        PerThreadCount count = new PerThreadCount(1);
        addConcurrently(count, 8, 100_000);
        assertThat(count.sum()).isEqualTo(800_000L);
    }

    @Test
    @Timeout(60)
    void aSumTakenWhileThreadsAddNeverGoesDownNorPastTheEnd() throws Exception {
        PerThreadCount count = new PerThreadCount(4);
        AtomicBoolean done = new AtomicBoolean();
        List<Long> sums = new ArrayList<>();
        Thread reader = new Thread(() -> {
            while (!done.get()) {
                sums.add(count.sum());
            }
        });
        reader.start();
        addConcurrently(count, 6, 200_000);
        done.set(true);
        reader.join();
        assertThat(sums).isSorted().allSatisfy((sum) -> assertThat(sum).isBetween(0L, 1_200_000L));
        assertThat(count.sum()).isEqualTo(1_200_000L);
    }

    @Test
    void anAdditionAllocatesNothingInItsOwnCellOrInTheSharedAdder() throws Exception {
        com.sun.management.ThreadMXBean threadBeans = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        PerThreadCount own = new PerThreadCount();
        PerThreadCount shared = new PerThreadCount(1);
        Thread owner = new Thread(shared::increment);
        owner.start();
        owner.join();
        long fewest = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            long before = threadBeans.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 100_000; i++) {
                own.increment();
                shared.increment();
            }
            fewest = Math.min(fewest, threadBeans.getCurrentThreadAllocatedBytes() - before);
        }
        assertThat(fewest).isZero();
        assertThat(own.sum()).isEqualTo(300_000L);
        assertThat(shared.sum()).isEqualTo(300_001L);
    }

    @Test
    void aNumberOfCellsThatIsNotAPowerOfTwoIsRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> new PerThreadCount(48))
                .withMessage("cells must be a power of two but was 48");
        assertThatIllegalArgumentException().isThrownBy(() -> new PerThreadCount(0));
    }

    /** Starts every thread, lets them add together once all are running, and waits for them. */
    private static void addConcurrently(PerThreadCount count, int threads, int additionsEach) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int thread = 0; thread < threads; thread++) {
                futures.add(pool.submit(() -> {
                    start.countDown();
                    start.await();
                    for (int i = 0; i < additionsEach; i++) {
                        count.increment();
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        }
        finally {
            pool.shutdown();
        }
    }

}
