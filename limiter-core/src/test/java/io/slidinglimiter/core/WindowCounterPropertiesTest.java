package io.slidinglimiter.core;

import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

import io.slidinglimiter.Decision;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The counters against brute-force models that keep every admitted permit and recount from
 * scratch on each decision.
 */
class WindowCounterPropertiesTest {

    /** How far time moves before a step: in whole slots of the limit under test, or in milliseconds. */
    enum Jump {
        NONE, ONE_SLOT, N_MINUS_ONE_SLOTS, N_SLOTS, N_PLUS_ONE_SLOTS, MILLION_SLOTS, SOME_MILLIS
    }

    record Step(Jump jump, long millis, long cost) {
        long advanceMillis(long slotMillis, int slots) {
            return switch (this.jump) {
                case NONE -> 0;
                case ONE_SLOT -> slotMillis;
                case N_MINUS_ONE_SLOTS -> (slots - 1) * slotMillis;
                case N_SLOTS -> slots * slotMillis;
                case N_PLUS_ONE_SLOTS -> (slots + 1) * slotMillis;
                case MILLION_SLOTS -> 1_000_000 * slotMillis;
                case SOME_MILLIS -> this.millis;
            };
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Jump> jumps = Arbitraries.frequency(
                Tuple.of(6, Jump.NONE), Tuple.of(2, Jump.ONE_SLOT),
                Tuple.of(1, Jump.N_MINUS_ONE_SLOTS), Tuple.of(1, Jump.N_SLOTS),
                Tuple.of(1, Jump.N_PLUS_ONE_SLOTS), Tuple.of(1, Jump.MILLION_SLOTS),
                Tuple.of(8, Jump.SOME_MILLIS));
        Arbitrary<Step> step = Combinators.combine(jumps, Arbitraries.longs().between(0, 400),
                Arbitraries.longs().between(1, 1_000)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(200);
    }

    @Property(tries = 500)
    void slidingWindowCounterDecidesLikeTheModel(@ForAll @IntRange(min = 1, max = 12) int slots,
            @ForAll @LongRange(min = 1, max = 50) long slotMillis, @ForAll @LongRange(min = 1, max = 40) long limit,
            @ForAll @LongRange(min = 0, max = 1_000_000_000_000L) long start, @ForAll("steps") List<Step> steps) {
        SlidingWindowCounter counter = new SlidingWindowCounter(slots * slotMillis, slots, start);
        SlotModel model = new SlotModel(slotMillis, slots);
        long now = start;
        for (Step step : steps) {
            now += step.advanceMillis(slotMillis, slots);
            long cost = 1 + (step.cost() - 1) % limit;
            Decision expected = model.decide(now, cost, limit);
            assertThat(counter.tryAcquire(now, cost, limit)).as("at %d cost %d", now, cost).isEqualTo(expected);
        }
    }

    @Property(tries = 500)
    void slidingLogDecidesLikeTheModel(@ForAll @LongRange(min = 1, max = 600) long windowMillis,
            @ForAll @LongRange(min = 1, max = 40) long limit,
            @ForAll @LongRange(min = 0, max = 1_000_000_000_000L) long start, @ForAll("steps") List<Step> steps) {
        SlidingLog log = new SlidingLog(windowMillis);
        LogModel model = new LogModel(windowMillis);
        long now = start;
        for (Step step : steps) {
            now += step.advanceMillis(windowMillis, 1);
            long cost = 1 + (step.cost() - 1) % limit;
            Decision expected = model.decide(now, cost, limit);
            assertThat(log.tryAcquire(now, cost, limit)).as("at %d cost %d", now, cost).isEqualTo(expected);
        }
    }

    @Property(tries = 300)
    void subWindowsAdmitAtMostTheLimitInAnyIntervalOfWindowLessOneSlot(
            @ForAll @IntRange(min = 1, max = 12) int slots, @ForAll @LongRange(min = 1, max = 50) long slotMillis,
            @ForAll @LongRange(min = 1, max = 40) long limit,
            @ForAll @Size(min = 1, max = 300) List<@LongRange(min = 0, max = 30) Long> gaps) {
        SlidingWindowCounter counter = new SlidingWindowCounter(slots * slotMillis, slots, 0);
        List<Long> admitted = admissions(counter, limit, gaps);
        assertAtMostLimitWithin(admitted, (slots - 1) * slotMillis, limit);
    }

    @Property(tries = 300)
    void slidingLogAdmitsAtMostTheLimitInAnyWindow(@ForAll @LongRange(min = 1, max = 600) long windowMillis,
            @ForAll @LongRange(min = 1, max = 40) long limit,
            @ForAll @Size(min = 1, max = 300) List<@LongRange(min = 0, max = 30) Long> gaps) {
        List<Long> admitted = admissions(new SlidingLog(windowMillis), limit, gaps);
        assertAtMostLimitWithin(admitted, windowMillis, limit);
    }

    private static List<Long> admissions(WindowCounter counter, long limit, List<Long> gaps) {
        List<Long> admitted = new ArrayList<>();
        long now = 0;
        for (long gap : gaps) {
            now += gap;
            if (counter.tryAcquire(now, 1, limit).allowed()) {
                admitted.add(now);
            }
        }
        return admitted;
    }

    /** Any run of admissions spanning less than {@code spanMillis} holds at most {@code limit}. */
    private static void assertAtMostLimitWithin(List<Long> admitted, long spanMillis, long limit) {
        for (int first = 0; first < admitted.size(); first++) {
            int last = first;
            while (last + 1 < admitted.size() && admitted.get(last + 1) - admitted.get(first) < spanMillis) {
                last++;
            }
            assertThat(last - first + 1L).as("admitted from %d", admitted.get(first)).isLessThanOrEqualTo(limit);
        }
    }

    /** Keeps (slot, cost) of every admission; a permit counts while its slot is among the newest N. */
    static final class SlotModel {

        private final long slotMillis;

        private final int slots;

        private final List<long[]> admitted = new ArrayList<>();

        SlotModel(long slotMillis, int slots) {
            this.slotMillis = slotMillis;
            this.slots = slots;
        }

        Decision decide(long now, long cost, long limit) {
            long slot = Math.floorDiv(now, this.slotMillis);
            long used = usedAt(slot);
            long retryAfter = 0;
            if (used + cost <= limit) {
                this.admitted.add(new long[] { slot, cost });
                used += cost;
            }
            else {
                for (long later = slot + 1; ; later++) {
                    if (usedAt(later) + cost <= limit) {
                        retryAfter = later * this.slotMillis - now;
                        break;
                    }
                }
            }
            long newest = Long.MIN_VALUE;
            for (long[] permit : this.admitted) {
                if (permit[0] > slot - this.slots) {
                    newest = Math.max(newest, permit[0]);
                }
            }
            long resetAfter = (newest == Long.MIN_VALUE) ? 0 : (newest + this.slots) * this.slotMillis - now;
            return new Decision(retryAfter == 0, limit, Math.max(0, limit - used), retryAfter, resetAfter);
        }

        private long usedAt(long slot) {
            long used = 0;
            for (long[] permit : this.admitted) {
                if (permit[0] > slot - this.slots) {
                    used += permit[1];
                }
            }
            return used;
        }

    }

    /** Keeps the time of every admitted permit; a permit counts while it is in {@code (now - W, now]}. */
    static final class LogModel {

        private final long windowMillis;

        private final List<Long> permits = new ArrayList<>();

        LogModel(long windowMillis) {
            this.windowMillis = windowMillis;
        }

        Decision decide(long now, long cost, long limit) {
            long used = usedAt(now);
            long retryAfter = 0;
            if (used + cost <= limit) {
                for (int i = 0; i < cost; i++) {
                    this.permits.add(now);
                }
                used += cost;
            }
            else {
                for (long later = now + 1; ; later++) {
                    if (usedAt(later) + cost <= limit) {
                        retryAfter = later - now;
                        break;
                    }
                }
            }
            long newest = Long.MIN_VALUE;
            for (long permit : this.permits) {
                if (permit > now - this.windowMillis) {
                    newest = Math.max(newest, permit);
                }
            }
            long resetAfter = (newest == Long.MIN_VALUE) ? 0 : newest + this.windowMillis - now;
            return new Decision(retryAfter == 0, limit, Math.max(0, limit - used), retryAfter, resetAfter);
        }

        private long usedAt(long now) {
            return this.permits.stream().filter(permit -> permit > now - this.windowMillis).count();
        }

    }

}
