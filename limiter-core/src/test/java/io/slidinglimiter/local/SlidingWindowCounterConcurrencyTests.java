package io.slidinglimiter.local;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.slidinglimiter.Decision;
import io.slidinglimiter.testsupport.ConcurrentCalls;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The counter's lock-free admissions, its lock-free rejections and its locked sections (moving to a
 * later slot, all-or-nothing decisions, peeks) on one counter at once: exactly the free permits get
 * through, and none is lost when a slot ends while others are being counted.
 */
class SlidingWindowCounterConcurrencyTests {

    private static final long T0 = 1_700_000_000_000L;

    private static final int THREADS = 8;

    private static final long LIMIT = 500;

    /**
     * Phases on a frozen clock, the clock moved by a seeded number of slots between them. In each
     * phase the threads ask far more than the limit, each by another path; the admissions per
     * phase must equal what a model of the window leaves free.
     */
    @Test
    void everyPathTogetherAdmitsExactlyWhatTheWindowLeavesFree() throws Exception {
        long seed = Long.getLong("limiter.seed", 20261202L);
        SplittableRandom random = new SplittableRandom(seed);
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        long[] admittedPerSlot = new long[128];
        long slot = 0;
        for (int phase = 0; phase < 30; phase++) {
            slot += random.nextInt(0, 4);
            long now = T0 + slot * 100 + random.nextInt(0, 100);
            long free = LIMIT;
            for (long counted = Math.max(0, slot - 9); counted <= slot; counted++) {
                free -= admittedPerSlot[(int) counted];
            }
            ConcurrentCalls calls = ConcurrentCalls.run(THREADS, 400, (thread, i) -> decide(counter, thread, now).allowed());
            assertThat(calls.failures()).as("seed %d, phase %d", seed, phase).hasValue(0);
            assertThat((long) calls.admitted().get()).as("seed %d, phase %d", seed, phase).isEqualTo(free);
            assertThat(counter.peek(now, LIMIT).remaining()).as("seed %d, phase %d", seed, phase).isZero();
            admittedPerSlot[(int) slot] += free;
        }
    }

    /** Half the calls come after the slot has ended: the slot's end must not lose or add a permit. */
    @Test
    void aSlotEndingUnderLoadLosesNoPermit() throws Exception {
        for (int round = 0; round < 50; round++) {
            SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
            // How many of the admitted calls came after the slot ended depends on how the threads interleave (all
            // can come before): the later slot holds at least those (a call of the earlier time decided after the
            // counter moved on counts in the later slot), and nothing else frees before the window ends.
            AtomicInteger admittedLater = new AtomicInteger();
            ConcurrentCalls calls = ConcurrentCalls.run(THREADS, 200, (thread, i) -> {
                boolean allowed = counter.tryAcquire(T0 + ((i < 100) ? 99 : 100), 1, LIMIT).allowed();
                if (allowed && i >= 100) {
                    admittedLater.incrementAndGet();
                }
                return allowed;
            });
            assertThat(calls.admitted()).as("round %d", round).hasValue((int) LIMIT);
            assertThat(counter.used()).as("round %d", round).isEqualTo(LIMIT);
            assertThat(counter.peek(T0 + 1099, LIMIT).remaining()).as("round %d: the later slot alone", round)
                    .isLessThanOrEqualTo(LIMIT - admittedLater.get());
            assertThat(counter.peek(T0 + 1100, LIMIT).remaining()).as("round %d", round).isEqualTo(LIMIT);
        }
    }

    /**
     * Two counters whose monitors have the same identity hash have no lock order of their own:
     * decisions that name them in opposite orders must neither deadlock nor lose exactness.
     */
    @Test
    @Timeout(60)
    void countersWithEqualIdentityHashesAreDecidedTogetherWithoutDeadlock() throws Exception {
        Map<Integer, SlidingWindowCounter> byHash = new HashMap<>();
        SlidingWindowCounter first;
        SlidingWindowCounter second;
        while (true) {
            SlidingWindowCounter counter = new SlidingWindowCounter(1000, 1, T0);
            SlidingWindowCounter earlier = byHash.putIfAbsent(System.identityHashCode(counter), counter);
            if (earlier != null) {
                first = earlier;
                second = counter;
                break;
            }
        }
        WindowCounter[] forwards = { first, second };
        WindowCounter[] backwards = { second, first };
        ConcurrentCalls calls = ConcurrentCalls.run(THREADS, 2_000, (thread, i) -> WindowCounter.tryAcquireAll(T0, 0,
                (thread % 2 == 0) ? forwards : backwards, new long[] { 1, 1 }, new long[] { LIMIT, LIMIT })
                .decisions().get(0).allowed());
        assertThat(calls.admitted()).hasValue((int) LIMIT);
        assertThat(first.used()).isEqualTo(LIMIT);
        assertThat(second.used()).isEqualTo(LIMIT);
    }

    /** One call, by the path of the thread's number. */
    private static Decision decide(SlidingWindowCounter counter, int thread, long now) {
        return switch (thread % 4) {
            case 0 -> counter.tryAcquire(now, 1, LIMIT);
            case 1 -> {
                long outcome = counter.acquire(now, 1, LIMIT);
                yield new Decision(outcome >= 0, LIMIT, Math.max(0, outcome), Math.max(0, -outcome), 0);
            }
            case 2 -> {
                SlidingWindowCounter other = new SlidingWindowCounter(1000, 10, now);
                yield WindowCounter.tryAcquireAll(now, 0, new WindowCounter[] { counter, other }, new long[] { 1, 1 },
                        new long[] { LIMIT, LIMIT }).decisions().get(0);
            }
            default -> {
                counter.peek(now, LIMIT);
                yield counter.tryAcquire(now, 1, LIMIT);
            }
        };
    }

}
