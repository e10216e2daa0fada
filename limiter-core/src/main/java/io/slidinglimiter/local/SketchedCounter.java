package io.slidinglimiter.local;

import java.util.function.BooleanSupplier;

import io.slidinglimiter.core.LimitDefinition;

/**
 * One key's view of an {@link OverflowSketch}: its count is the smallest of its cells; admitting
 * adds to all of them. Synchronizes on the sketch, so views of one sketch are decided one at a time.
 */
final class SketchedCounter extends WindowCounter {

    private final OverflowSketch sketch;

    private final String key;

    private final boolean digest;

    private final int[] cells;

    private final BooleanSupplier superseded;

    SketchedCounter(OverflowSketch sketch, String key, boolean digest, int[] cells, BooleanSupplier superseded) {
        this.sketch = sketch;
        this.key = key;
        this.digest = digest;
        this.cells = cells;
        this.superseded = superseded;
    }

    @Override
    public boolean countsFor(LimitDefinition definition) {
        return this.sketch.countsFor(definition);
    }

    @Override
    public long windowMillis() {
        return this.sketch.windowMillis();
    }

    @Override
    Object monitor() {
        return this.sketch;
    }

    /** Views are made per call: two views of one key in one sketch count the same permits. */
    @Override
    boolean sameCountsAs(WindowCounter other) {
        return other instanceof SketchedCounter view && view.sketch == this.sketch && view.digest == this.digest
                && view.key.equals(this.key);
    }

    @Override
    boolean retired() {
        return this.superseded.getAsBoolean();
    }

    /** Views are made for one call and never stored: nothing retires them. */
    @Override
    void retire() {
        throw new UnsupportedOperationException("A view of the overflow sketch is never retired");
    }

    @Override
    void advance(long nowMillis) {
        this.sketch.advance(nowMillis);
    }

    @Override
    long used() {
        return this.sketch.used(this.cells);
    }

    @Override
    long retryAfterMillis(long nowMillis, long cost, long limit) {
        return this.sketch.retryAfterMillis(this.cells, nowMillis, cost, limit);
    }

    @Override
    void add(long nowMillis, long cost) {
        this.sketch.add(this.cells, nowMillis, cost);
    }

    /**
     * Gives nothing back: the cells are shared with other keys, whose permits they cannot tell from
     * this key's (an over-count, never an under-count; the backend refunds only keys with counters).
     */
    @Override
    void remove(long acquiredAtMillis, long cost) {
    }

    @Override
    long resetAfterMillis(long nowMillis) {
        return this.sketch.resetAfterMillis(this.cells, nowMillis);
    }

    /** Cells are shared with other keys: one key's reset cannot clear them. */
    @Override
    void clear() {
    }

}
