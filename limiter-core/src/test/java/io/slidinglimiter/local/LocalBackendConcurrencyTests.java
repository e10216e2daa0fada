package io.slidinglimiter.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLongArray;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads hammer the same counters on a frozen clock: exactly the limit gets through.
 */
class LocalBackendConcurrencyTests {

    private static final int THREADS = 8;

    private static final int ATTEMPTS_PER_THREAD = 100_000;

    private final ManualTimeSource frozen = new ManualTimeSource(1_700_000_000_000L);

    private final LocalBackend backend = new LocalBackend(this.frozen, 100_000);

    @Test
    void oneKeyAdmitsExactlyTheLimit() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hot", 1_000, Duration.ofSeconds(1), 10);
        long admitted = hammer(attempt -> this.backend.tryAcquire(limit, "one-key", 1).allowed() ? 1 : 0);
        assertThat(admitted).isEqualTo(1_000);
    }

    @Test
    void oneKeyOfTheSlidingLogAdmitsExactlyTheLimit() throws Exception {
        LimitDefinition limit = new LimitDefinition("hot-log", 1_000, Duration.ofSeconds(1), 1, Algorithm.SLIDING_LOG);
        long admitted = hammer(attempt -> this.backend.tryAcquire(limit, "one-key", 1).allowed() ? 1 : 0);
        assertThat(admitted).isEqualTo(1_000);
    }

    /**
     * Calls admitted against a cost of 500 and settled to 100, from many threads at once: a call needs
     * 500 free, counting those in flight, so exactly six get through (used 0, 100, ... 500 when
     * admitted), and the key ends holding exactly their 600, for both algorithms.
     */
    @Test
    void callsSettledBelowTheirCostAreAdmittedExactlyWhileTheirChargesLeaveRoom() throws Exception {
        for (Algorithm algorithm : Algorithm.values()) {
            LimitDefinition limit = new LimitDefinition("settled-" + algorithm, 1_000, Duration.ofSeconds(1),
                    (algorithm == Algorithm.SLIDING_LOG) ? 1 : 10, algorithm);
            List<LimitRequest> requests = List.of(new LimitRequest(limit, "one-key", 500));
            long admitted = hammer(attempt -> {
                Decisions taken = this.backend.tryAcquireAll(requests);
                if (!taken.allowed()) {
                    return 0;
                }
                this.backend.settle(requests, taken, new long[] { 100 });
                return 1;
            });
            assertThat(admitted).as(algorithm.name()).isEqualTo(6);
            assertThat(this.backend.peek(limit, "one-key").remaining()).as(algorithm.name()).isEqualTo(400);
        }
    }

    @Test
    void manyKeysEachAdmitExactlyTheLimit() throws Exception {
        int keys = 100;
        LimitDefinition limit = LimitDefinition.of("many", 1_000, Duration.ofSeconds(1), 10);
        AtomicLongArray perKey = new AtomicLongArray(keys);
        hammer(attempt -> {
            int key = attempt % keys;
            if (this.backend.tryAcquire(limit, "key-" + key, 1).allowed()) {
                perKey.incrementAndGet(key);
            }
            return 0;
        });
        for (int key = 0; key < keys; key++) {
            assertThat(perKey.get(key)).as("key-%d", key).isEqualTo(1_000);
        }
    }

    @Test
    void allOrNothingDecisionsStayExactUnderContention() throws Exception {
        // Each call takes one permit of its user's limit and one of a shared limit, all-or-nothing.
        LimitDefinition perUser = LimitDefinition.of("per-user", 300, Duration.ofSeconds(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 1_000, Duration.ofSeconds(1), 10);
        AtomicLongArray perUserAdmitted = new AtomicLongArray(THREADS);
        long admitted = hammer(attempt -> {
            int user = attempt % THREADS;
            boolean allowed = this.backend.tryAcquireAll(List.of(new LimitRequest(perUser, "user-" + user, 1),
                    new LimitRequest(global, "all", 1))).allowed();
            if (allowed) {
                perUserAdmitted.incrementAndGet(user);
            }
            return allowed ? 1 : 0;
        });
        assertThat(admitted).isEqualTo(1_000);
        long sum = 0;
        for (int user = 0; user < THREADS; user++) {
            assertThat(perUserAdmitted.get(user)).isLessThanOrEqualTo(300);
            assertThat(this.backend.peek(perUser, "user-" + user).remaining()).isEqualTo(300 - perUserAdmitted.get(user));
            sum += perUserAdmitted.get(user);
        }
        assertThat(sum).isEqualTo(1_000);
    }

    interface Attempt {
        long run(int attempt);
    }

    private long hammer(Attempt attempt) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Long>> results = new ArrayList<>();
            for (int thread = 0; thread < THREADS; thread++) {
                int offset = thread;
                Callable<Long> worker = () -> {
                    start.await();
                    long sum = 0;
                    for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
                        sum += attempt.run(i + offset);
                    }
                    return sum;
                };
                results.add(pool.submit(worker));
            }
            start.countDown();
            long total = 0;
            for (Future<Long> result : results) {
                total += result.get();
            }
            return total;
        }
        finally {
            pool.shutdownNow();
        }
    }

    /**
     * A window changed at run time while other threads still create counters under the old one: when
     * every window has ended, no counter and no byte may stay counted as live.
     */
    @Test
    void changingAWindowUnderLoadLeavesNoRoomTaken() throws Exception {
        LocalBackend backend = new LocalBackend(this.frozen, 1_000_000);
        LimitDefinition[] shapes = { LimitDefinition.of("changing", 5, Duration.ofSeconds(1), 10),
                LimitDefinition.of("changing", 5, Duration.ofSeconds(2), 10),
                new LimitDefinition("changing", 5, Duration.ofSeconds(1), 1, Algorithm.SLIDING_LOG) };
        ConcurrentCalls calls = ConcurrentCalls.run(THREADS, 20_000, (thread, i) -> {
            if (thread == 0 && i % 50 == 0) {
                backend.peek(shapes[(i / 50) % shapes.length], "any");
                return backend.tryAcquire(shapes[(i / 50) % shapes.length], "switch-" + i, 1).allowed();
            }
            return backend.tryAcquire(shapes[i % shapes.length], "t" + thread + "-" + i, 1).allowed();
        });
        assertThat(calls.failures()).hasValue(0);
        this.frozen.advance(Duration.ofSeconds(3));
        assertThat(backend.liveCounters()).isZero();
        assertThat(backend.liveBytes()).isZero();
    }

}
