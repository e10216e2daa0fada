package io.slidinglimiter.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
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
    void theManualSourceMovesOnlyForward() {
        ManualTimeSource time = new ManualTimeSource(1_000);
        time.advance(Duration.ofSeconds(2));
        time.advanceMillis(5);
        assertThat(time.currentTimeMillis()).isEqualTo(3_005);
        assertThatIllegalArgumentException().isThrownBy(() -> time.advanceMillis(-1))
                .withMessage("Time only moves forward, but the step was -1ms");
    }

}
