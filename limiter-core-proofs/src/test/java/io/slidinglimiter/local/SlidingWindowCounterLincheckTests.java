package io.slidinglimiter.local;

import java.util.Map;
import java.util.TreeMap;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.ModelChecking;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;

/**
 * Model-checked linearizability of the lock-free {@link SlidingWindowCounter}: Lincheck runs small
 * concurrent scenarios of every path (lock-free admissions and rejections, the allocation-free
 * {@code acquire}, peeks, refunds, resets, retiring, and all-or-nothing decisions with a second
 * counter), explores their thread interleavings, and checks that each outcome is what some
 * sequential order of the same calls gives on {@link Model}, a brute-force window written apart
 * from the counter.
 * <p>
 * Times come from a short table around slot boundaries, so scenarios cross slots (the locked path),
 * stay within one (the lock-free path), and pass older times than one already seen.
 * <p>
 * It has teeth: its first run found a lock-free rejection that read {@code remaining} after the
 * check that validates its reads (a reset in between made it report 2 permits left with a wait),
 * and a seal planted as a plain read and write instead of a compare-and-set fails it within 20 s
 * (an admission slips into a counter being retired). About 45 s on two cores; more with
 * {@code -Dlimiter.lincheck.iterations=N -Dlimiter.lincheck.invocations=M}.
 */
@Param(name = "time", gen = IntGen.class, conf = "0:5")
@Param(name = "cost", gen = IntGen.class, conf = "1:2")
public class SlidingWindowCounterLincheckTests {

    static final long T0 = 1_700_000_000_000L;

    static final long WINDOW_MILLIS = 400;

    static final int SLOTS = 4;

    static final long LIMIT = 3;

    /** Times by index: within the first slot, its end, the next slots, and a jump past the window. */
    static final long[] TIMES = { T0, T0 + 50, T0 + 99, T0 + 100, T0 + 250, T0 + 520 };

    private final SlidingWindowCounter counter = new SlidingWindowCounter(WINDOW_MILLIS, SLOTS, T0);

    private final SlidingWindowCounter other = new SlidingWindowCounter(WINDOW_MILLIS, SLOTS, T0);

    /** Lincheck makes one instance per scenario. */
    public SlidingWindowCounterLincheckTests() {
    }

    @Operation
    public Decision tryAcquire(@Param(name = "time") int time, @Param(name = "cost") int cost) {
        return this.counter.tryAcquire(TIMES[time], cost, LIMIT);
    }

    @Operation
    public long acquire(@Param(name = "time") int time, @Param(name = "cost") int cost) {
        return this.counter.acquire(TIMES[time], cost, LIMIT);
    }

    @Operation
    public Decision peek(@Param(name = "time") int time) {
        return this.counter.peek(TIMES[time], LIMIT);
    }

    @Operation
    public void refund(@Param(name = "time") int time, @Param(name = "time") int acquiredAt,
            @Param(name = "cost") int cost) {
        this.counter.refund(TIMES[time], TIMES[acquiredAt], 0, cost);
    }

    @Operation
    public void reset(@Param(name = "time") int time) {
        this.counter.reset(TIMES[time], 0);
    }

    @Operation
    public boolean retireIfEmpty(@Param(name = "time") int time) {
        return this.counter.retireIfEmpty(TIMES[time]);
    }

    @Operation
    public Decisions tryAcquireBoth(@Param(name = "time") int time, @Param(name = "cost") int cost) {
        return WindowCounter.tryAcquireAll(TIMES[time], 0, new WindowCounter[] { this.counter, this.other },
                new long[] { cost, 1 }, new long[] { LIMIT, LIMIT });
    }

    @Test
    void everyInterleavingIsSomeSequentialOrderOfTheSameCalls() {
        ModelChecking.options(1_000)
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .sequentialSpecification(Model.class)
                .check(SlidingWindowCounterLincheckTests.class);
    }

    /**
     * The window as a map from slot to count, advanced by the newest time seen (an older time counts
     * in the newest slot), with the counter's rules for waits, resets, refunds and retiring.
     */
    public static final class Model {

        private final Window counter = new Window();

        private final Window other = new Window();

        public Decision tryAcquire(int time, int cost) {
            return this.counter.tryAcquire(TIMES[time], cost);
        }

        public long acquire(int time, int cost) {
            Decision decision = this.counter.tryAcquire(TIMES[time], cost);
            if (decision == null) {
                return WindowCounter.RETIRED;
            }
            return decision.allowed() ? decision.remaining() : -decision.retryAfterMillis();
        }

        public Decision peek(int time) {
            if (this.counter.retired) {
                return null;
            }
            this.counter.advance(TIMES[time]);
            return this.counter.decision(TIMES[time], this.counter.retryAfter(TIMES[time], 1));
        }

        public void refund(int time, int acquiredAt, int cost) {
            this.counter.refund(TIMES[time], TIMES[acquiredAt], cost);
        }

        public void reset(int time) {
            if (!this.counter.retired) {
                this.counter.advance(TIMES[time]);
                this.counter.counts.clear();
                this.counter.countedSince = Long.MAX_VALUE;
            }
        }

        public boolean retireIfEmpty(int time) {
            if (!this.counter.retired) {
                this.counter.advance(TIMES[time]);
                this.counter.retired = this.counter.used() == 0;
            }
            return this.counter.retired;
        }

        public Decisions tryAcquireBoth(int time, int cost) {
            long now = TIMES[time];
            if (this.counter.retired || this.other.retired) {
                return null;
            }
            this.counter.advance(now);
            this.other.advance(now);
            long first = this.counter.retryAfter(now, cost);
            long second = this.other.retryAfter(now, 1);
            boolean allFit = first == 0 && second == 0;
            if (allFit) {
                this.counter.add(now, cost);
                this.other.add(now, 1);
            }
            return new Decisions(allFit, java.util.List.of(this.counter.decision(now, first),
                    this.other.decision(now, second)), now);
        }

    }

    /** One brute-force window. */
    static final class Window {

        private static final long SLOT_MILLIS = WINDOW_MILLIS / SLOTS;

        final TreeMap<Long, Long> counts = new TreeMap<>();

        long newestSlot = Math.floorDiv(T0, SLOT_MILLIS);

        /** When the first permit since the last reset was counted: older admissions are not refunded. */
        long countedSince = Long.MIN_VALUE;

        boolean retired;

        Decision tryAcquire(long now, long cost) {
            if (this.retired) {
                return null;
            }
            advance(now);
            long retryAfter = retryAfter(now, cost);
            if (retryAfter == 0) {
                add(now, cost);
            }
            return decision(now, retryAfter);
        }

        void refund(long now, long acquiredAt, long cost) {
            if (this.retired) {
                return;
            }
            advance(now);
            if (acquiredAt < this.countedSince || acquiredAt <= now - WINDOW_MILLIS) {
                return;
            }
            long slot = Math.floorDiv(acquiredAt, SLOT_MILLIS);
            Long count = this.counts.get(slot);
            if (count != null && slot > this.newestSlot - SLOTS) {
                this.counts.put(slot, count - Math.min(cost, count));
            }
        }

        void advance(long now) {
            this.newestSlot = Math.max(this.newestSlot, Math.floorDiv(now, SLOT_MILLIS));
            this.counts.headMap(this.newestSlot - SLOTS, true).clear();
        }

        void add(long now, long cost) {
            if (this.countedSince == Long.MAX_VALUE) {
                this.countedSince = now;
            }
            this.counts.merge(this.newestSlot, cost, Long::sum);
        }

        long used() {
            return this.counts.values().stream().mapToLong(Long::longValue).sum();
        }

        /** The time until the oldest slots whose leaving frees enough have left: a slot leaves N slots after it began. */
        long retryAfter(long now, long cost) {
            long excess = used() + cost - LIMIT;
            if (excess <= 0) {
                return 0;
            }
            long freed = 0;
            for (Map.Entry<Long, Long> slot : this.counts.entrySet()) {
                freed += slot.getValue();
                if (freed >= excess) {
                    return (slot.getKey() + SLOTS) * SLOT_MILLIS - now;
                }
            }
            throw new IllegalStateException("cost over the limit");
        }

        Decision decision(long now, long retryAfter) {
            long resetAfter = 0;
            for (Map.Entry<Long, Long> slot : this.counts.descendingMap().entrySet()) {
                if (slot.getValue() > 0) {
                    resetAfter = (slot.getKey() + SLOTS) * SLOT_MILLIS - now;
                    break;
                }
            }
            return new Decision(retryAfter == 0, LIMIT, Math.max(0, LIMIT - used()), Math.min(retryAfter, WINDOW_MILLIS),
                    Math.min(resetAfter, WINDOW_MILLIS));
        }

    }

}
