package io.slidinglimiter.core;

import java.util.Arrays;

/**
 * The sliding window counter: a window of {@code W} milliseconds cut into {@code N} slots of
 * {@code W/N}, aligned to absolute time ({@code slotStart = t - t % (W/N)}), held as a ring of
 * {@code N} counts and their rolling total. Moving to a later slot clears only the slots being
 * reused; a jump of {@code N} slots or more clears all.
 * <p>
 * A permit counted in the slot starting at {@code s} is counted until {@code s + W}: the effective
 * window is between {@code W - W/N} and {@code W} long. {@code N = 1} is a fixed window.
 */
public final class SlidingWindowCounter extends WindowCounter {

    private final long slotMillis;

    private final int slots;

    private final long[] counts;

    /** The absolute number ({@code time / slotMillis}) of the newest slot. */
    private long currentSlot;

    /** Where the newest slot is in the ring, and when the next one starts: no division within a slot. */
    private int currentIndex;

    private long nextSlotStartMillis;

    private long total;

    /**
     * Creates an empty counter.
     * @param windowMillis the window length, a multiple of {@code subWindows} milliseconds
     * @param subWindows the number of slots, 1 to {@value LimitDefinition#MAX_SUB_WINDOWS}
     * @param nowMillis the current time
     */
    public SlidingWindowCounter(long windowMillis, int subWindows, long nowMillis) {
        super(windowMillis);
        LimitDefinition.checkGeometry("Counter", windowMillis, subWindows);
        this.slots = subWindows;
        this.slotMillis = windowMillis / subWindows;
        this.counts = new long[subWindows];
        moveTo(Math.floorDiv(nowMillis, this.slotMillis));
    }

    @Override
    public boolean countsFor(LimitDefinition definition) {
        return definition.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER
                && definition.windowMillis() == this.windowMillis && definition.subWindows() == this.slots;
    }

    @Override
    void advance(long nowMillis) {
        if (nowMillis < this.nextSlotStartMillis) {
            // Still the newest slot, or an older time, which counts in it.
            return;
        }
        long slot = Math.floorDiv(nowMillis, this.slotMillis);
        long steps = slot - this.currentSlot;
        if (steps >= this.slots) {
            Arrays.fill(this.counts, 0);
            this.total = 0;
        }
        else {
            int index = this.currentIndex;
            for (long step = 0; step < steps; step++) {
                index = (index + 1 == this.slots) ? 0 : index + 1;
                this.total -= this.counts[index];
                this.counts[index] = 0;
            }
        }
        moveTo(slot);
    }

    private void moveTo(long slot) {
        this.currentSlot = slot;
        this.currentIndex = index(slot);
        this.nextSlotStartMillis = (slot + 1) * this.slotMillis;
    }

    @Override
    long used() {
        return this.total;
    }

    @Override
    long retryAfterMillis(long nowMillis, long cost, long limit) {
        long excess = this.total + cost - limit;
        if (excess <= 0) {
            return 0;
        }
        // Slots leave the window oldest first; find the one whose departure frees enough. The
        // oldest slot sits just after the newest in the ring: walk on from there, no division.
        long freed = 0;
        int index = this.currentIndex;
        for (long slot = this.currentSlot - this.slots + 1; slot <= this.currentSlot; slot++) {
            index = (index + 1 == this.slots) ? 0 : index + 1;
            freed += this.counts[index];
            if (freed >= excess) {
                return expiryMillis(slot) - nowMillis;
            }
        }
        // Only reachable when cost > limit, which callers refuse before asking.
        throw new IllegalStateException("cost " + cost + " can never fit under limit " + limit);
    }

    @Override
    void add(long nowMillis, long cost) {
        this.counts[this.currentIndex] += cost;
        this.total += cost;
    }

    @Override
    void remove(long acquiredAtMillis, long cost) {
        long slot = Math.floorDiv(acquiredAtMillis, this.slotMillis);
        if (slot > this.currentSlot || slot <= this.currentSlot - this.slots) {
            return;
        }
        int index = index(slot);
        long taken = Math.min(cost, this.counts[index]);
        this.counts[index] -= taken;
        this.total -= taken;
    }

    @Override
    long resetAfterMillis(long nowMillis) {
        if (this.total == 0) {
            return 0;
        }
        int index = this.currentIndex;
        for (long slot = this.currentSlot; ; slot--) {
            if (this.counts[index] != 0) {
                return expiryMillis(slot) - nowMillis;
            }
            index = (index == 0) ? this.slots - 1 : index - 1;
        }
    }

    @Override
    void clear() {
        Arrays.fill(this.counts, 0);
        this.total = 0;
    }

    /** When a slot's permits leave the window: its start plus the window. */
    private long expiryMillis(long slot) {
        return (slot + this.slots) * this.slotMillis;
    }

    private int index(long slot) {
        return (int) Math.floorMod(slot, (long) this.slots);
    }

}
