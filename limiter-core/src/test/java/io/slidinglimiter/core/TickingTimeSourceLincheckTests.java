package io.slidinglimiter.core;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

/**
 * Model-checked linearizability of {@link TickingTimeSource}: Lincheck explores the interleavings
 * of threads reading the time, the underlying clock moving on, and the one ticking thread's steps
 * (starting to tick, ticking, stopping), and checks every outcome against the clock run one
 * operation at a time. So a read never sees time go back, however a read of the underlying clock
 * and a tick interleave (both raise the shared value by compare-and-set), and a read served from
 * the field never runs ahead of the underlying clock. The random one-in-{@value TickingTimeSource#SAMPLED_READS}
 * read of the underlying clock is off here (the model checker replays every choice), and
 * {@code TimeSourceTests} covers it. A few seconds.
 */
public class TickingTimeSourceLincheckTests {

    private final ManualTimeSource clock = new ManualTimeSource(1_000);

    private final TickingTimeSource ticking = new TickingTimeSource(this.clock, 2, false, false);

    @Operation
    public long read() {
        return this.ticking.currentTimeMillis();
    }

    @Operation
    public void clockMovesOn() {
        this.clock.advanceMillis(1);
    }

    @Operation(nonParallelGroup = "ticker")
    public void startTicking() {
        this.ticking.startTicking();
    }

    @Operation(nonParallelGroup = "ticker")
    public boolean tick() {
        return this.ticking.tick();
    }

    @Operation(nonParallelGroup = "ticker")
    public void stopTicking() {
        this.ticking.stopTicking();
    }

    @Test
    void readsAreLinearizableAndTimeNeverGoesBack() {
        new ModelCheckingOptions()
                .iterations(Integer.getInteger("limiter.lincheck.iterations", 30))
                .invocationsPerIteration(Integer.getInteger("limiter.lincheck.invocations", 500))
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .check(getClass());
    }

}
