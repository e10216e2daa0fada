package io.slidinglimiter.core;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A time source that moves only when told to: for tests. Thread-safe.
 * <pre>{@code
 * ManualTimeSource time = new ManualTimeSource(1_000_000);
 * LocalBackend backend = new LocalBackend(time, 10_000);
 * time.advance(Duration.ofSeconds(1));
 * }</pre>
 */
public final class ManualTimeSource implements TimeSource {

    private final AtomicLong millis;

    /**
     * Creates a time source standing at the given time.
     * @param startMillis the initial time in milliseconds
     */
    public ManualTimeSource(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    @Override
    public long currentTimeMillis() {
        return this.millis.get();
    }

    /**
     * Moves time forward.
     * @param amount how far; must not be negative
     */
    public void advance(Duration amount) {
        advanceMillis(amount.toMillis());
    }

    /**
     * Moves time forward.
     * @param amountMillis how far in milliseconds; must not be negative
     */
    public void advanceMillis(long amountMillis) {
        if (amountMillis < 0) {
            throw new IllegalArgumentException("Time only moves forward, but the step was " + amountMillis + "ms");
        }
        this.millis.addAndGet(amountMillis);
    }

}
