package io.slidinglimiter.local;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.testsupport.ThreadAllocation;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a warmed-up decision allocates on the local backend, counted by the JVM for this thread
 * ({@code getCurrentThreadAllocatedBytes}) over 100 000 calls, not timed: a verdict ({@code admit}) allocates nothing,
 * allowed or rejected, and a key kept over its limit is told its rejection without a new object.
 */
class LocalBackendAllocationTests {

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);

    private final RateLimiters rateLimiters = rateLimiters();

    @Test
    void aVerdictAllocatesNothingAllowedOrRejected() throws Throwable {
        assertThat(bytesPerCall(() -> this.rateLimiters.admit("allow", "k"))).isZero();
        assertThat(bytesPerCall(() -> this.rateLimiters.admit("reject", "k"))).isZero();
    }

    @Test
    void aRejectionRepeatedIsTheSameDecision() throws Throwable {
        assertThat(bytesPerCall(() -> this.rateLimiters.tryAcquire("reject", "k").allowed())).isZero();
        Decision rejection = this.rateLimiters.tryAcquire("reject", "k");
        assertThat(this.rateLimiters.tryAcquire("reject", "k")).isSameAs(rejection);
        this.time.advance(Duration.ofMillis(1));
        assertThat(this.rateLimiters.tryAcquire("reject", "k").retryAfterMillis()).as("a new moment, a new decision")
                .isEqualTo(rejection.retryAfterMillis() - 1);
    }

    /** Bytes per call, counted by {@link ThreadAllocation}; every call answers alike, all admitted or none. */
    private static double bytesPerCall(ThreadAllocation.Call call) throws Throwable {
        ThreadAllocation.Measured measured = ThreadAllocation.of(call);
        assertThat(measured.answeredYes()).isIn(0L, ThreadAllocation.TOTAL_CALLS);
        return measured.bytesPerCall();
    }

    private RateLimiters rateLimiters() {
        LimitRegistry registry = new LimitRegistry();
        registry.register(LimitDefinition.of("allow", 1L << 50, Duration.ofSeconds(1), 10));
        registry.register(LimitDefinition.of("reject", 1, Duration.ofHours(1), 10));
        RateLimiters limiters = new RateLimiters(registry, new LocalBackend(this.time, 1_000));
        limiters.tryAcquire("reject", "k");
        return limiters;
    }

}
