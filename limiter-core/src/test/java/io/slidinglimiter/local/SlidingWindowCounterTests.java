package io.slidinglimiter.local;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SlidingWindowCounterTests {

    private static final long T0 = 1_700_000_000_000L; // slot-aligned, like the article's T0

    /**
     * The article's execution trace ("执行追踪"): window 1000 ms, N = 10, limit 100. Our counter
     * differs from the article's record() at one step by design (SPEC: a rejected request consumes
     * nothing): at T0+100ms it admits 10 of the 20 requests and holds 100, where the article's
     * record() counted all 20 and reached 110. Every other count is the article's.
     */
    @Test
    void replaysTheArticlesExecutionTrace() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);

        // T0+0ms: 60 requests, slot 0, all admitted.
        assertThat(admitted(counter, T0, 60)).isEqualTo(60);
        assertThat(counter.used()).isEqualTo(60);

        // T0+50ms: 30 requests, still slot 0: 90.
        assertThat(admitted(counter, T0 + 50, 30)).isEqualTo(30);
        assertThat(counter.used()).isEqualTo(90);

        // T0+100ms: 20 requests, slot 1 (cleared, held 0). 10 fit; the other 10 are rejected and wait
        // until slot 0 (90 permits) leaves the window at T0+1000ms.
        List<Decision> atHundred = decide(counter, T0 + 100, 20);
        assertThat(atHundred.stream().filter(Decision::allowed)).hasSize(10);
        assertThat(counter.used()).isEqualTo(100);
        Decision firstRejected = atHundred.get(10);
        assertThat(firstRejected.allowed()).isFalse();
        assertThat(firstRejected.remaining()).isZero();
        assertThat(firstRejected.retryAfterMillis()).isEqualTo(900);

        // T0+200ms: 5 requests, slot 2: all rejected, nothing consumed.
        assertThat(admitted(counter, T0 + 200, 5)).isZero();
        assertThat(counter.used()).isEqualTo(100);

        // T0+1100ms: slots 0 and 1 have left the window; everything counted is gone: 10 admitted.
        assertThat(admitted(counter, T0 + 1100, 10)).isEqualTo(10);
        assertThat(counter.used()).isEqualTo(10);

        // T0+1150ms: 30 more in the same slot: 40.
        assertThat(admitted(counter, T0 + 1150, 30)).isEqualTo(30);
        assertThat(counter.used()).isEqualTo(40);
    }

    @Test
    void permitsLeaveTheWindowOneWindowAfterTheirSlotStarted() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        admitted(counter, T0 + 950, 100); // slot 9 starts at T0+900
        assertThat(counter.tryAcquire(T0 + 1899, 1, 100).allowed()).isFalse();
        assertThat(counter.tryAcquire(T0 + 1900, 100, 100).allowed()).isTrue();
    }

    @Test
    void aJumpOfTheWholeWindowOrMoreClearsEverySlot() {
        for (long jumpSlots : new long[] { 10, 11, 1_000_000 }) {
            SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
            for (int slot = 0; slot < 10; slot++) {
                counter.tryAcquire(T0 + slot * 100, 10, 100);
            }
            assertThat(counter.used()).isEqualTo(100);
            long later = T0 + 900 + jumpSlots * 100;
            assertThat(counter.tryAcquire(later, 100, 100).allowed()).as("jump of %d slots", jumpSlots).isTrue();
        }
    }

    @Test
    void onlyTheSlotsBeingReusedAreCleared() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        counter.tryAcquire(T0, 10, 100);        // slot 0
        counter.tryAcquire(T0 + 300, 20, 100);  // slot 3
        counter.tryAcquire(T0 + 700, 30, 100);  // slot 7
        // At T0+1000 slot 0 leaves; slots 3 and 7 stay.
        assertThat(counter.peek(T0 + 1000, 100).remaining()).isEqualTo(50);
        // At T0+1300 slot 3 leaves too.
        assertThat(counter.peek(T0 + 1300, 100).remaining()).isEqualTo(70);
        assertThat(counter.peek(T0 + 1699, 100).remaining()).isEqualTo(70);
        assertThat(counter.peek(T0 + 1700, 100).remaining()).isEqualTo(100);
    }

    @Test
    void rejectedRequestsDoNotConsumeQuota() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        assertThat(counter.tryAcquire(T0, 8, 10).allowed()).isTrue();
        assertThat(counter.tryAcquire(T0, 3, 10).allowed()).isFalse();
        assertThat(counter.tryAcquire(T0, 2, 10).allowed()).isTrue();
        assertThat(counter.used()).isEqualTo(10);
    }

    @Test
    void retryAfterIsTheExactTimeUntilEnoughOldSlotsExpire() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        counter.tryAcquire(T0 + 10, 3, 10);   // slot 0, leaves at T0+1000
        counter.tryAcquire(T0 + 420, 4, 10);  // slot 4, leaves at T0+1400
        counter.tryAcquire(T0 + 830, 3, 10);  // slot 8, leaves at T0+1800
        Decision needsOne = counter.tryAcquire(T0 + 900, 1, 10);
        assertThat(needsOne.retryAfterMillis()).isEqualTo(100);
        Decision needsFive = counter.tryAcquire(T0 + 900, 5, 10);
        assertThat(needsFive.retryAfterMillis()).isEqualTo(500);
        Decision needsTen = counter.tryAcquire(T0 + 900, 10, 10);
        assertThat(needsTen.retryAfterMillis()).isEqualTo(900);
        assertThat(needsTen.resetAfterMillis()).isEqualTo(900);
        // Waiting exactly that long is enough.
        assertThat(counter.tryAcquire(T0 + 1400, 5, 10).allowed()).isTrue();
    }

    @Test
    void aLimitChangedAtRunTimeAppliesOnTheNextDecisionAndKeepsTheCounts() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        assertThat(admitted(counter, T0, 10, 5)).isEqualTo(5);
        assertThat(counter.tryAcquire(T0, 1, 8).remaining()).isEqualTo(2);
        Decision lowered = counter.tryAcquire(T0, 1, 4);
        assertThat(lowered.allowed()).isFalse();
        assertThat(lowered.remaining()).isZero();
    }

    @Test
    void aTimeOlderThanOneSeenIsCountedInTheNewestSlot() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        counter.tryAcquire(T0 + 500, 1, 10);
        counter.tryAcquire(T0 + 120, 1, 10);
        // Both permits are in slot 5 and stay until T0+1500, never expire early.
        assertThat(counter.peek(T0 + 1499, 10).remaining()).isEqualTo(8);
        assertThat(counter.peek(T0 + 1500, 10).remaining()).isEqualTo(10);
    }

    @Test
    void aClockThatStepsBackNeverStretchesTheWaitsBeyondTheWindow() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0 + 500_000);
        counter.tryAcquire(T0 + 500_000, 1, 1);
        Decision stepBack = counter.tryAcquire(T0, 1, 1);
        assertThat(stepBack.allowed()).isFalse();
        assertThat(stepBack.retryAfterMillis()).isEqualTo(1000);
        assertThat(stepBack.resetAfterMillis()).isEqualTo(1000);
        SlidingLog log = new SlidingLog(1000);
        log.tryAcquire(T0 + 500_000, 1, 1);
        assertThat(log.tryAcquire(T0, 1, 1).retryAfterMillis()).isEqualTo(1000);
    }

    @Test
    void aFixedWindowLetsTwiceTheLimitThroughAtTheBoundary() {
        SlidingWindowCounter fixed = new SlidingWindowCounter(1000, 1, T0);
        assertThat(articleBoundaryBurst(fixed)).isEqualTo(200);
    }

    @Test
    void tenSubWindowsHoldTheArticlesBoundaryBurstToTheLimit() {
        SlidingWindowCounter sliding = new SlidingWindowCounter(1000, 10, T0);
        assertThat(articleBoundaryBurst(sliding)).isEqualTo(100);
    }

    /**
     * The README's honest bound: the 2x burst is stretched, not removed. A full limit at the end of
     * slot 0 and another the moment slot 0 leaves are both admitted, 901 ms apart; one millisecond
     * sooner, the second is refused.
     */
    @Test
    void theWorstCaseAdmitsTwiceTheLimitOnlyAcrossMoreThanTheWindowLessOneSlot() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        assertThat(counter.tryAcquire(T0 + 99, 100, 100).allowed()).isTrue();
        assertThat(counter.tryAcquire(T0 + 999, 1, 100).allowed()).isFalse();
        assertThat(counter.tryAcquire(T0 + 1000, 100, 100).allowed()).isTrue();
    }

    @Test
    void badGeometryIsRefusedWithTheValueNamed() {
        assertThatIllegalArgumentException().isThrownBy(() -> new SlidingWindowCounter(0, 10, T0))
                .withMessageContaining("window must be positive but was 0ms");
        assertThatIllegalArgumentException().isThrownBy(() -> new SlidingWindowCounter(1000, 0, T0))
                .withMessageContaining("sub-windows must be between 1 and 3600 but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> new SlidingWindowCounter(3_601_000, 3601, T0))
                .withMessageContaining("but was 3601");
        assertThatIllegalArgumentException().isThrownBy(() -> new SlidingWindowCounter(1000, 7, T0))
                .withMessageContaining("window 1000ms cannot be cut into 7 sub-windows of whole milliseconds");
    }

    @Test
    void badCostsAreRefusedAndConsumeNothing() {
        SlidingWindowCounter counter = new SlidingWindowCounter(1000, 10, T0);
        assertThatIllegalArgumentException().isThrownBy(() -> counter.tryAcquire(T0, 0, 10))
                .withMessage("cost must be greater than 0 but was 0");
        assertThatIllegalArgumentException().isThrownBy(() -> counter.tryAcquire(T0, -3, 10))
                .withMessage("cost must be greater than 0 but was -3");
        assertThatIllegalArgumentException().isThrownBy(() -> counter.tryAcquire(T0, 11, 10))
                .withMessageContaining("cost 11 exceeds the limit of 10 permits per window");
        assertThat(counter.used()).isZero();
    }

    /** 100 requests in the last 100 ms of one window, 100 in the first 100 ms of the next. */
    static int articleBoundaryBurst(WindowCounter counter) {
        int admitted = 0;
        for (int i = 0; i < 100; i++) {
            admitted += counter.tryAcquire(T0 + 900 + i, 1, 100).allowed() ? 1 : 0;
        }
        for (int i = 0; i < 100; i++) {
            admitted += counter.tryAcquire(T0 + 1000 + i, 1, 100).allowed() ? 1 : 0;
        }
        return admitted;
    }

    private static long admitted(WindowCounter counter, long nowMillis, int requests) {
        return decide(counter, nowMillis, requests).stream().filter(Decision::allowed).count();
    }

    private static long admitted(WindowCounter counter, long nowMillis, int requests, long limit) {
        long admitted = 0;
        for (int i = 0; i < requests; i++) {
            admitted += counter.tryAcquire(nowMillis, 1, limit).allowed() ? 1 : 0;
        }
        return admitted;
    }

    private static List<Decision> decide(WindowCounter counter, long nowMillis, int requests) {
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            decisions.add(counter.tryAcquire(nowMillis, 1, 100));
        }
        return decisions;
    }

}
