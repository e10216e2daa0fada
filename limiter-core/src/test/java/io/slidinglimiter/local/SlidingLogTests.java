package io.slidinglimiter.local;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SlidingLogTests {

    private static final long T0 = 1_700_000_000_000L;

    @Test
    void admitsAtMostTheLimitInAnyWindowAcrossTheArticlesBoundaryBurst() {
        SlidingLog log = new SlidingLog(1000);
        assertThat(SlidingWindowCounterTests.articleBoundaryBurst(log)).isEqualTo(100);
    }

    @Test
    void aPermitLeavesExactlyOneWindowAfterItWasAdmitted() {
        SlidingLog log = new SlidingLog(1000);
        log.tryAcquire(T0 + 123, 5, 5);
        Decision rejected = log.tryAcquire(T0 + 1122, 1, 5);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMillis()).isEqualTo(1);
        assertThat(log.tryAcquire(T0 + 1123, 5, 5).allowed()).isTrue();
    }

    @Test
    void retryAfterWaitsForEnoughPermitsToExpire() {
        SlidingLog log = new SlidingLog(1000);
        log.tryAcquire(T0, 2, 10);
        log.tryAcquire(T0 + 300, 3, 10);
        log.tryAcquire(T0 + 600, 5, 10);
        assertThat(log.tryAcquire(T0 + 700, 1, 10).retryAfterMillis()).isEqualTo(300);
        assertThat(log.tryAcquire(T0 + 700, 3, 10).retryAfterMillis()).isEqualTo(600);
        Decision whole = log.tryAcquire(T0 + 700, 10, 10);
        assertThat(whole.retryAfterMillis()).isEqualTo(900);
        assertThat(whole.resetAfterMillis()).isEqualTo(900);
        assertThat(whole.remaining()).isZero();
    }

    @Test
    void permitsOfOneMillisecondShareOneEntrySoMemoryStaysWithinTheLimit() {
        SlidingLog log = new SlidingLog(1000);
        for (int i = 0; i < 10_000; i++) {
            log.tryAcquire(T0 + (i % 500), 1, 300);
        }
        assertThat(log.used()).isEqualTo(300);
        assertThat(log.entries()).isLessThanOrEqualTo(300);
        for (int i = 0; i < 10_000; i++) {
            log.tryAcquire(T0 + 5_000 + i / 1000, 1, 300);
        }
        assertThat(log.entries()).isEqualTo(1);
    }

    @Test
    void resetForgetsEveryPermit() {
        SlidingLog log = new SlidingLog(1000);
        log.tryAcquire(T0, 5, 5);
        log.reset(T0, 0);
        assertThat(log.tryAcquire(T0, 5, 5).allowed()).isTrue();
    }

    @Test
    void badInputIsRefusedWithTheValueNamed() {
        assertThatIllegalArgumentException().isThrownBy(() -> new SlidingLog(0))
                .withMessageContaining("window must be positive but was 0ms");
        SlidingLog log = new SlidingLog(1000);
        assertThatIllegalArgumentException().isThrownBy(() -> log.tryAcquire(T0, 0, 5))
                .withMessage("cost must be greater than 0 but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> log.tryAcquire(T0, 6, 5))
                .withMessageContaining("cost 6 exceeds the limit of 5");
        assertThat(log.used()).isZero();
    }

}
