package io.slidinglimiter.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.local.LocalBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The timed backend decides as its delegate does, times each decision when it has a place for the
 * durations, and tells its observer how each ended: allowed, rejected, or what the backend threw.
 */
class TimedBackendTests {

    private final LocalBackend local = new LocalBackend(new ManualTimeSource(1_700_000_000_000L), 1_000);

    private final LimitDefinition limit = LimitDefinition.of("timed", 2, Duration.ofMinutes(1), 10);

    private final List<Long> durations = new ArrayList<>();

    private final List<String> observed = new ArrayList<>();

    private final DecisionObserver observer = new DecisionObserver() {

        @Override
        public Object deciding(String limits) {
            return limits;
        }

        @Override
        public void decided(Object started, Boolean allowed, Throwable failure) {
            TimedBackendTests.this.observed.add(started + ":" + ((failure != null) ? "error" : allowed));
        }

    };

    @Test
    void eachDecisionIsTimedAndObserved() {
        TimedBackend timed = new TimedBackend(this.local, this.durations::add, this.observer);
        assertThat(timed.tryAcquire(this.limit, "k", 1).allowed()).isTrue();
        assertThat(timed.admit(this.limit, "k", 1)).isTrue();
        assertThat(timed.admit(this.limit, "k", 1)).isFalse();
        assertThat(this.durations).hasSize(3).allSatisfy((nanos) -> assertThat(nanos).isNotNegative());
        assertThat(this.observed).containsExactly("timed:true", "timed:true", "timed:false");
    }

    @Test
    void withoutDurationsItOnlyObserves() {
        TimedBackend timed = new TimedBackend(this.local, null, this.observer);
        assertThat(timed.admit(this.limit, "k", 1)).isTrue();
        assertThat(timed.tryAcquireAll(List.of(new LimitRequest(this.limit, "k", 2))).allowed()).isFalse();
        assertThat(this.observed).containsExactly("timed:true", "timed:false");
        assertThat(this.local.peek(this.limit, "k").remaining()).isEqualTo(1);
    }

    @Test
    void aFailureIsObservedAndThrownUnchanged() {
        TimedBackend timed = new TimedBackend(this.local, this.durations::add, this.observer);
        assertThatIllegalArgumentException().isThrownBy(() -> timed.tryAcquire(this.limit, "k", 3));
        assertThat(this.observed).containsExactly("timed:error");
        assertThat(this.durations).hasSize(1);
        assertThat(this.local.peek(this.limit, "k").remaining()).as("nothing taken").isEqualTo(2);
    }

}
