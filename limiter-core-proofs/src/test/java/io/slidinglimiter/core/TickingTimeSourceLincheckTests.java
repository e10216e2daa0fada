package io.slidinglimiter.core;

import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.ModelChecking;

/**
 * Model-checked linearizability of {@link TickingTimeSource}, in each of its two modes: Lincheck
 * explores the interleavings of threads reading the time with the underlying clock moving on, and
 * checks every outcome against the clock run one operation at a time. While idle, reads go to the
 * underlying clock, racing each other to raise the shared value. While ticking, reads served from
 * the field race the ticking thread, which moves the clock, ticks and makes the sampled reads (the
 * random one-in-{@value TickingTimeSource#SAMPLED_READS} choice is the operation's here, since the
 * model checker replays every choice). So a read never sees time go back in either mode.
 * <p>
 * Not linearizable, and need not be: a read of the underlying clock that a move of the clock
 * overtakes before it raises the shared value returns the time it read (a time the clock showed
 * during the call), and a read that starts before the clock starts ticking may return the clock's
 * newer time. {@code TimeSourceTests} covers the switch between the modes. A few seconds.
 */
public class TickingTimeSourceLincheckTests {

    @Test
    void whileTickingReadsAreLinearizable() {
        check(Ticking.class);
    }

    @Test
    void whileIdleReadsAreLinearizable() {
        check(Idle.class);
    }

    private static void check(Class<?> scenario) {
        ModelChecking.options(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .check(scenario);
    }

    /** Reads served from the field or from the underlying clock, while the ticking thread raises the field. */
    public static class Ticking {

        private final ManualTimeSource clock = new ManualTimeSource(1_000);

        private final TickingTimeSource ticking = new TickingTimeSource(this.clock, 1_000_000, false);

        public Ticking() {
            this.ticking.startTicking();
        }

        @Operation
        public long readFromTheField() {
            return this.ticking.readWhileTicking(false);
        }

        /** A sampled read: on the ticking thread here, where the clock does not move under it. */
        @Operation(nonParallelGroup = "ticker")
        public long readFromTheClock() {
            return this.ticking.readWhileTicking(true);
        }

        /** On the ticking thread, as the real clock moves between two ticks. */
        @Operation(nonParallelGroup = "ticker")
        public void clockMovesOn() {
            this.clock.advanceMillis(1);
        }

        @Operation(nonParallelGroup = "ticker")
        public boolean tick() {
            return this.ticking.tick();
        }

    }

    /** Reads that go to the underlying clock, each raising the shared value to what it read. */
    public static class Idle {

        private final ManualTimeSource clock = new ManualTimeSource(1_000);

        private final TickingTimeSource ticking = new TickingTimeSource(this.clock, 2, false);

        @Operation
        public long read() {
            return this.ticking.currentTimeMillis();
        }

        @Operation
        public void clockMovesOn() {
            this.clock.advanceMillis(1);
        }

    }

}
