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

    private final int[] indices;

    private final BooleanSupplier superseded;

    private final SlidingWindowCounter[] cells;

    SketchedCounter(OverflowSketch sketch, String key, boolean digest, int[] indices, BooleanSupplier superseded) {
        this.sketch = sketch;
        this.key = key;
        this.digest = digest;
        this.indices = indices;
        this.superseded = superseded;
        this.cells = new SlidingWindowCounter[indices.length];
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
        for (int i = 0; i < this.indices.length; i++) {
            this.cells[i] = this.sketch.cell(this.indices[i], nowMillis);
            this.cells[i].advance(nowMillis);
        }
    }

    @Override
    long used() {
        long smallest = Long.MAX_VALUE;
        for (SlidingWindowCounter cell : this.cells) {
            smallest = Math.min(smallest, cell.used());
        }
        return smallest;
    }

    @Override
    long retryAfterMillis(long nowMillis, long cost, long limit) {
        if (used() + cost <= limit) {
            return 0;
        }
        // The key's count falls as soon as any one of its cells does.
        long soonest = Long.MAX_VALUE;
        for (SlidingWindowCounter cell : this.cells) {
            soonest = Math.min(soonest, cell.retryAfterMillis(nowMillis, cost, limit));
        }
        return soonest;
    }

    @Override
    void add(long nowMillis, long cost) {
        for (SlidingWindowCounter cell : this.cells) {
            cell.add(nowMillis, cost);
        }
    }

    @Override
    void remove(long acquiredAtMillis, long cost) {
        for (SlidingWindowCounter cell : this.cells) {
            cell.remove(acquiredAtMillis, cost);
        }
    }

    @Override
    long resetAfterMillis(long nowMillis) {
        long soonest = Long.MAX_VALUE;
        for (SlidingWindowCounter cell : this.cells) {
            soonest = Math.min(soonest, cell.resetAfterMillis(nowMillis));
        }
        return soonest;
    }

    /** Cells are shared with other keys: one key's reset cannot clear them. */
    @Override
    void clear() {
    }

}
