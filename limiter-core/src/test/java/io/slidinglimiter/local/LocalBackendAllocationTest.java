package io.slidinglimiter.local;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a warmed-up decision allocates on the local backend, counted by the JVM for this thread
 * ({@code getCurrentThreadAllocatedBytes}) over 100 000 calls, not timed: a verdict ({@code admit}) allocates nothing,
 * allowed or rejected, and a key kept over its limit is told its rejection without a new object.
 */
class LocalBackendAllocationTest {

    private static final int CALLS = 100_000;

    private static final int ROUNDS = 3;

    private final ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);

    private final RateLimiters rateLimiters = rateLimiters();

    @Test
    void aVerdictAllocatesNothingAllowedOrRejected() {
        assertThat(bytesPerCall(() -> this.rateLimiters.admit("allow", "k"))).isZero();
        assertThat(bytesPerCall(() -> this.rateLimiters.admit("reject", "k"))).isZero();
    }

    @Test
    void aRejectionRepeatedIsTheSameDecision() {
        assertThat(bytesPerCall(() -> this.rateLimiters.tryAcquire("reject", "k").allowed())).isZero();
        Decision rejection = this.rateLimiters.tryAcquire("reject", "k");
        assertThat(this.rateLimiters.tryAcquire("reject", "k")).isSameAs(rejection);
        this.time.advance(Duration.ofMillis(1));
        assertThat(this.rateLimiters.tryAcquire("reject", "k").retryAfterMillis()).as("a new moment, a new decision")
                .isEqualTo(rejection.retryAfterMillis() - 1);
    }

    /**
     * Bytes this thread allocated per call, in the quietest of a few rounds after a warm-up round: a
     * decision that allocates shows in every round, while the JVM's own one-off work (linking a call
     * site, a deoptimization) lands in one round at most.
     */
    private static double bytesPerCall(Call call) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
                .getThreadMXBean();
        int admitted = 0;
        for (int i = 0; i < CALLS; i++) {
            admitted += call.decide() ? 1 : 0;
        }
        long fewest = Long.MAX_VALUE;
        for (int round = 0; round < ROUNDS; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < CALLS; i++) {
                admitted += call.decide() ? 1 : 0;
            }
            fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
        }
        assertThat(admitted).isIn(0, (ROUNDS + 1) * CALLS);
        return (double) fewest / CALLS;
    }

    private RateLimiters rateLimiters() {
        LimitRegistry registry = new LimitRegistry();
        registry.register(LimitDefinition.of("allow", 1L << 50, Duration.ofSeconds(1), 10));
        registry.register(LimitDefinition.of("reject", 1, Duration.ofHours(1), 10));
        RateLimiters limiters = new RateLimiters(registry, new LocalBackend(this.time, 1_000));
        limiters.tryAcquire("reject", "k");
        return limiters;
    }

    @FunctionalInterface
    private interface Call {

        boolean decide();

    }

}
