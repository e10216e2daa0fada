package io.slidinglimiter.core;

/**
 * Epoch milliseconds that only move forward: slots stay aligned to absolute time (as far as the
 * wall clock was right at start) while a wall-clock step back or forward has no effect.
 */
enum MonotonicTimeSource implements TimeSource {

    INSTANCE;

    private final long originMillis = System.currentTimeMillis();

    private final long originNanos = System.nanoTime();

    @Override
    public long currentTimeMillis() {
        return this.originMillis + (System.nanoTime() - this.originNanos) / 1_000_000L;
    }

}
