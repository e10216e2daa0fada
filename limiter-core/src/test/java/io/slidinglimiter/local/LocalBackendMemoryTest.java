package io.slidinglimiter.local;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

class LocalBackendMemoryTest {

    @Test
    void liveCountersStayAtTheBoundAndIdleOnesVanishAfterTheirWindow() {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);
        // Maintenance on the calling thread, so the bound is checked at exact points.
        LocalBackend backend = new LocalBackend(time, 100_000, Runnable::run);
        LimitDefinition limit = LimitDefinition.of("per-client", 10, Duration.ofSeconds(10), 10);

        for (int key = 0; key < 2_000_000; key++) {
            backend.tryAcquire(limit, "client-" + key, 1);
            if (key % 1_000 == 0) {
                time.advanceMillis(1);
            }
            if (key % 250_000 == 249_999) {
                assertThat(backend.liveCounters()).as("after %d keys", key + 1).isLessThanOrEqualTo(100_000);
            }
        }
        assertThat(backend.liveCounters()).isEqualTo(100_000);
        assertThat(backend.evictions()).isEqualTo(1_900_000);

        time.advance(Duration.ofSeconds(10));
        assertThat(backend.liveCounters()).isZero();
        assertThat(backend.evictions()).as("expiry is not eviction").isEqualTo(1_900_000);
    }

    @Test
    void aCounterInUseIsKeptWhileIdleOnesExpire() {
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L);
        LocalBackend backend = new LocalBackend(time, 1_000, Runnable::run);
        LimitDefinition limit = LimitDefinition.of("api", 5, Duration.ofSeconds(1), 10);
        backend.tryAcquire(limit, "idle", 1);
        for (int step = 0; step < 5; step++) {
            backend.tryAcquire(limit, "busy", 1);
            time.advanceMillis(400);
        }
        assertThat(backend.liveCounters()).isEqualTo(1);
        assertThat(backend.peek(limit, "busy").remaining()).isEqualTo(3);
    }

}
