package io.slidinglimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TimeSourceTest {

    @Test
    void theMonotonicSourceNeverGoesBackAndStartsAtTheWallClock() {
        TimeSource monotonic = TimeSource.monotonic();
        long wallMillis = System.currentTimeMillis();
        long previous = monotonic.currentTimeMillis();
        assertThat(previous).isCloseTo(wallMillis, org.assertj.core.data.Offset.offset(60_000L));
        for (int i = 0; i < 1_000_000; i++) {
            long now = monotonic.currentTimeMillis();
            if (now < previous) {
                throw new AssertionError("went back from " + previous + " to " + now);
            }
            previous = now;
        }
    }

    @Test
    void aTickingSourceServesWhatItLastReadAndCatchesUpOnEachTick() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        assertThat(ticking.currentTimeMillis()).as("not ticking: the clock itself").isEqualTo(1_000);
        ticking.startTicking();
        clock.advanceMillis(7);
        assertThat(ticking.currentTimeMillis()).as("until the next tick").isEqualTo(1_000);
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_007);
    }

    @Test
    void aTickingSourceStopsAfterItsIdleTicksAndThenReadsTheClock() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        ticking.startTicking();
        ticking.currentTimeMillis();
        assertThat(ticking.tick()).as("read since the last tick").isTrue();
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.tick()).as("three ticks without a read").isFalse();
        ticking.stopTicking();
        clock.advanceMillis(5);
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_005);
    }

    @Test
    void aTickingSourceNeverGoesBackWhenItSwitchesBetweenTheFieldAndTheClock() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        clock.advanceMillis(4);
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_004);
        // A tick that read the clock before that read publishes later: the field keeps the newer time.
        ticking.startTicking();
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_004);
        TickingTimeSource stale = new TickingTimeSource(() -> 990, 3, false);
        stale.startTicking();
        assertThat(stale.currentTimeMillis()).isEqualTo(990);
    }

    @Test
    void theSharedTickingSourceParksWhenIdleAndWakesOnTheNextRead() {
        TickingTimeSource ticking = new TickingTimeSource(TimeSource.monotonic(), 200, true);
        long previous = ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            long now = ticking.currentTimeMillis();
            assertThat(now).isGreaterThanOrEqualTo(previous);
            return ticking.isTicking();
        });
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> !ticking.isTicking());
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(ticking::isTicking);
        assertThat(ticking.currentTimeMillis()).isCloseTo(TimeSource.monotonic().currentTimeMillis(),
                org.assertj.core.data.Offset.offset(1_000L));
    }

    @Test
    void theManualSourceMovesOnlyForward() {
        ManualTimeSource time = new ManualTimeSource(1_000);
        time.advance(Duration.ofSeconds(2));
        time.advanceMillis(5);
        assertThat(time.currentTimeMillis()).isEqualTo(3_005);
        assertThatIllegalArgumentException().isThrownBy(() -> time.advanceMillis(-1))
                .withMessage("Time only moves forward, but the step was -1ms");
    }

}
