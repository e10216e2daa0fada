package io.slidinglimiter.local;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The counters against brute-force models that keep every admitted permit and recount from
 * scratch on each decision, over seeded random schedules. A failure names its seed; replay it
 * alone with {@code -Dlimiter.seed=N}.
 */
public class WindowCounterPropertiesTests {

    /** Schedules per property; {@code -Dlimiter.seeds=N} runs more. */
    private static final int SEEDS = Integer.getInteger("limiter.seeds", 500);

    /** How far time moves before a step: in whole slots of the limit under test, or in milliseconds. */
    enum Jump {
        NONE, ONE_SLOT, N_MINUS_ONE_SLOTS, N_SLOTS, N_PLUS_ONE_SLOTS, MILLION_SLOTS, SOME_MILLIS
    }

    /** The jumps with their weights: most steps stay in the slot or move a little. */
    private static final Jump[] JUMPS = weighted(6, Jump.NONE, 2, Jump.ONE_SLOT, 1, Jump.N_MINUS_ONE_SLOTS,
            1, Jump.N_SLOTS, 1, Jump.N_PLUS_ONE_SLOTS, 1, Jump.MILLION_SLOTS, 8, Jump.SOME_MILLIS);

    record Step(Jump jump, long millis, long cost) {

        static Step random(SplittableRandom random) {
            return new Step(JUMPS[random.nextInt(JUMPS.length)], random.nextLong(0, 401), random.nextLong(1, 1_001));
        }

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

    @Test
    void everyJumpIsDrawn() {
        List<Jump> drawn = new ArrayList<>();
        forEachSeed((seed) -> {
            for (Step step : steps(new SplittableRandom(seed))) {
                drawn.add(step.jump());
            }
        });
        assertThat(drawn).contains(Jump.values());
    }

    @Test
    void slidingWindowCounterDecidesLikeTheModel() {
        slidingWindowCounterSchedules(WindowCounterPropertiesTests::replay);
    }

    @Test
    void slidingLogDecidesLikeTheModel() {
        slidingLogSchedules(WindowCounterPropertiesTests::replay);
    }

    @Test
    void slidingWindowCounterSettledAfterEachCallDecidesLikeTheModel() {
        slidingWindowCounterSchedules(WindowCounterPropertiesTests::replaySettled);
    }

    @Test
    void slidingLogSettledAfterEachCallDecidesLikeTheModel() {
        slidingLogSchedules(WindowCounterPropertiesTests::replaySettled);
    }

    /** Replays one seed's schedule on a counter and its model. */
    @FunctionalInterface
    interface Replay {

        void replay(SplittableRandom random, WindowCounter counter, Model model, long slotMillis, int slots, long limit,
                long start, String schedule);

    }

    /** Every seed's sliding window counter (1 to 12 slots of 1 to 50 ms, limits 1 to 40) and its model. */
    private static void slidingWindowCounterSchedules(Replay replay) {
        forEachSeed((seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            int slots = random.nextInt(1, 13);
            long slotMillis = random.nextLong(1, 51);
            long limit = random.nextLong(1, 41);
            long start = random.nextLong(0, 1_000_000_000_001L);
            SlidingWindowCounter counter = new SlidingWindowCounter(slots * slotMillis, slots, start);
            replay.replay(random, counter, new SlotModel(slotMillis, slots), slotMillis, slots, limit, start,
                    String.format("seed %d (N=%d, slot=%dms, limit=%d)", seed, slots, slotMillis, limit));
        });
    }

    /** Every seed's sliding log (windows of 1 to 600 ms, limits 1 to 40) and its model. */
    private static void slidingLogSchedules(Replay replay) {
        forEachSeed((seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            long windowMillis = random.nextLong(1, 601);
            long limit = random.nextLong(1, 41);
            long start = random.nextLong(0, 1_000_000_000_001L);
            replay.replay(random, new SlidingLog(windowMillis), new LogModel(windowMillis), windowMillis, 1, limit,
                    start, String.format("seed %d (W=%dms, limit=%d)", seed, windowMillis, limit));
        });
    }

    @Test
    void subWindowsAdmitAtMostTheLimitInAnyIntervalOfWindowLessOneSlot() {
        forEachSeed((seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            int slots = random.nextInt(1, 13);
            long slotMillis = random.nextLong(1, 51);
            long limit = random.nextLong(1, 41);
            SlidingWindowCounter counter = new SlidingWindowCounter(slots * slotMillis, slots, 0);
            List<Long> admitted = admissions(counter, limit, gaps(random));
            assertAtMostLimitWithin(admitted, (slots - 1) * slotMillis, limit, seed);
        });
    }

    @Test
    void slidingLogAdmitsAtMostTheLimitInAnyWindow() {
        forEachSeed((seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            long windowMillis = random.nextLong(1, 601);
            long limit = random.nextLong(1, 41);
            List<Long> admitted = admissions(new SlidingLog(windowMillis), limit, gaps(random));
            assertAtMostLimitWithin(admitted, windowMillis, limit, seed);
        });
    }

    /**
     * Replays a seed's steps on a counter and its model, which must decide alike; every other step
     * goes through the allocation-free {@link WindowCounter#acquire}, which must answer the same.
     * @param slotMillis the unit of the steps' jumps: a slot, or the log's window
     * @param slots the slots a window holds (1 for the log)
     */
    private static void replay(SplittableRandom random, WindowCounter counter, Model model, long slotMillis,
            int slots, long limit, long start, String schedule) {
        long now = start;
        int stepNumber = 0;
        for (Step step : steps(random)) {
            now += step.advanceMillis(slotMillis, slots);
            long cost = 1 + (step.cost() - 1) % limit;
            Decision expected = model.decide(now, cost, limit);
            String description = schedule + ": at " + now + " cost " + cost;
            if (stepNumber++ % 2 == 0) {
                assertThat(counter.tryAcquire(now, cost, limit)).as(description).isEqualTo(expected);
            }
            else {
                long outcome = expected.allowed() ? expected.remaining() : -expected.retryAfterMillis();
                assertThat(counter.acquire(now, cost, limit)).as(description).isEqualTo(outcome);
            }
        }
    }

    /**
     * Replays a seed's steps as calls charged after they ran: each admitted call is settled, some
     * time later, to a random charge from 0 to twice the limit (given back below its cost, counted
     * now above it, carrying the key past its limit), on the counter and on its model alike.
     */
    private static void replaySettled(SplittableRandom random, WindowCounter counter, Model model, long slotMillis,
            int slots, long limit, long start, String schedule) {
        long now = start;
        for (Step step : steps(random)) {
            now += step.advanceMillis(slotMillis, slots);
            long cost = 1 + (step.cost() - 1) % limit;
            Decision expected = model.decide(now, cost, limit);
            String description = schedule + ": at " + now + " cost " + cost;
            assertThat(counter.tryAcquire(now, cost, limit)).as(description).isEqualTo(expected);
            if (!expected.allowed()) {
                continue;
            }
            long acquiredAt = now;
            now += random.nextBoolean() ? 0 : random.nextLong(0, 3 * slotMillis);
            long charge = random.nextLong(0, 2 * limit + 1);
            model.settle(now, acquiredAt, charge - cost);
            if (charge < cost) {
                counter.refund(now, acquiredAt, 0, cost - charge);
            }
            else if (charge > cost) {
                assertThat(counter.charge(now, charge - cost)).isTrue();
            }
            assertThat(counter.peek(now, limit)).as(description + " settled to " + charge + " at " + now)
                    .isEqualTo(model.peek(now, limit));
        }
    }

    /** Runs {@code property} for each seed, or only for {@code -Dlimiter.seed=N} when given. */
    static void forEachSeed(LongConsumer property) {
        forEachSeed(SEEDS, property);
    }

    /**
     * Runs {@code property} for seeds 0 to {@code seeds - 1}, or only for {@code -Dlimiter.seed=N}
     * when given, so that a failure's seed replays it alone.
     * @param seeds how many
     * @param property the property, given each seed
     */
    public static void forEachSeed(int seeds, LongConsumer property) {
        Long only = Long.getLong("limiter.seed");
        if (only != null) {
            property.accept(only);
            return;
        }
        for (long seed = 0; seed < seeds; seed++) {
            property.accept(seed);
        }
    }

    private static List<Step> steps(SplittableRandom random) {
        int count = random.nextInt(1, 201);
        List<Step> steps = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            steps.add(Step.random(random));
        }
        return steps;
    }

    private static List<Long> gaps(SplittableRandom random) {
        int count = random.nextInt(1, 301);
        List<Long> gaps = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            gaps.add(random.nextLong(0, 31));
        }
        return gaps;
    }

    private static Jump[] weighted(Object... weightsAndJumps) {
        List<Jump> jumps = new ArrayList<>();
        for (int i = 0; i < weightsAndJumps.length; i += 2) {
            for (int copy = 0; copy < (int) weightsAndJumps[i]; copy++) {
                jumps.add((Jump) weightsAndJumps[i + 1]);
            }
        }
        return jumps.toArray(Jump[]::new);
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
    private static void assertAtMostLimitWithin(List<Long> admitted, long spanMillis, long limit, long seed) {
        for (int first = 0; first < admitted.size(); first++) {
            int last = first;
            while (last + 1 < admitted.size() && admitted.get(last + 1) - admitted.get(first) < spanMillis) {
                last++;
            }
            assertThat(last - first + 1L).as("seed %d: admitted from %d", seed, admitted.get(first))
                    .isLessThanOrEqualTo(limit);
        }
    }

    /** A brute-force model of a counter. */
    interface Model {

        Decision decide(long now, long cost, long limit);

        /**
         * Settles a call admitted at {@code acquiredAt}: below zero, gives back up to that many of
         * its permits if they are still in the window; above zero, counts that many more now.
         */
        void settle(long now, long acquiredAt, long difference);

        /** What a call of cost 1 would be told, consuming nothing. */
        Decision peek(long now, long limit);

    }

    /**
     * Keeps (slot, cost) of every admission; a permit counts while its slot is among the newest N.
     * Public for the Redis leases' tests, which count admissions decided elsewhere with it.
     */
    public static final class SlotModel implements Model {

        private final long slotMillis;

        private final int slots;

        private final List<long[]> admitted = new ArrayList<>();

        public SlotModel(long slotMillis, int slots) {
            this.slotMillis = slotMillis;
            this.slots = slots;
        }

        /**
         * Counts an admission decided elsewhere.
         * @param now its time
         * @param cost its permits
         */
        public void add(long now, long cost) {
            this.admitted.add(new long[] { Math.floorDiv(now, this.slotMillis), cost });
        }

        /**
         * @param now a time
         * @return the permits counted in the window at {@code now}
         */
        public long used(long now) {
            return usedAt(Math.floorDiv(now, this.slotMillis));
        }

        @Override
        public Decision decide(long now, long cost, long limit) {
            return decide(now, cost, limit, true);
        }

        @Override
        public Decision peek(long now, long limit) {
            return decide(now, 1, limit, false);
        }

        @Override
        public void settle(long now, long acquiredAt, long difference) {
            long slot = Math.floorDiv(now, this.slotMillis);
            if (difference > 0) {
                this.admitted.add(new long[] { slot, difference });
                return;
            }
            long acquiredSlot = Math.floorDiv(acquiredAt, this.slotMillis);
            long left = -difference;
            for (long[] permit : this.admitted) {
                if (permit[0] == acquiredSlot && acquiredSlot > slot - this.slots) {
                    long taken = Math.min(permit[1], left);
                    permit[1] -= taken;
                    left -= taken;
                }
            }
        }

        private Decision decide(long now, long cost, long limit, boolean take) {
            long slot = Math.floorDiv(now, this.slotMillis);
            long used = usedAt(slot);
            long retryAfter = 0;
            if (used + cost <= limit) {
                if (take) {
                    this.admitted.add(new long[] { slot, cost });
                    used += cost;
                }
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
                if (permit[0] > slot - this.slots && permit[1] > 0) {
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
    static final class LogModel implements Model {

        private final long windowMillis;

        private final List<Long> permits = new ArrayList<>();

        LogModel(long windowMillis) {
            this.windowMillis = windowMillis;
        }

        @Override
        public Decision decide(long now, long cost, long limit) {
            return decide(now, cost, limit, true);
        }

        @Override
        public Decision peek(long now, long limit) {
            return decide(now, 1, limit, false);
        }

        @Override
        public void settle(long now, long acquiredAt, long difference) {
            for (long i = 0; i < difference; i++) {
                this.permits.add(now);
            }
            if (acquiredAt > now - this.windowMillis) {
                for (long i = 0; i < -difference; i++) {
                    this.permits.remove(Long.valueOf(acquiredAt));
                }
            }
        }

        private Decision decide(long now, long cost, long limit, boolean take) {
            long used = usedAt(now);
            long retryAfter = 0;
            if (used + cost <= limit) {
                if (take) {
                    for (int i = 0; i < cost; i++) {
                        this.permits.add(now);
                    }
                    used += cost;
                }
            }
            else {
                // The count only drops when a permit leaves: try those moments, earliest first.
                retryAfter = this.permits.stream().map((permit) -> permit + this.windowMillis)
                        .filter((leaves) -> leaves > now).sorted()
                        .filter((leaves) -> usedAt(leaves) + cost <= limit).findFirst().orElseThrow() - now;
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
