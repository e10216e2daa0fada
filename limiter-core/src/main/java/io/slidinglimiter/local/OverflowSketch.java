package io.slidinglimiter.local;

import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.Algorithm;

/**
 * Where a limit counts the keys that get no counter of their own because the store is full: a
 * count-min sketch whose cells are sliding window counters. A key is counted in one cell of each of
 * {@value #ROWS} rows, chosen by seeded hashes; its count is the smallest of its cells, and every
 * cell holds at least the count of each key hashed to it, so the sketch can only over-estimate: it
 * may reject a key that had room (when others share its cells), never admit one that had none.
 * <p>
 * For the sliding log, whose permits expire exactly one window after their admission, each cell
 * counts one extra slot, so a permit is never forgotten before the log would forget it.
 * <p>
 * Cells are created on first use. The sketch holds at most {@value #MAX_CELL_SLOTS} slot counts in
 * all (about 1 MB), whatever the geometry: fewer, wider cells for finer windows.
 */
final class OverflowSketch {

    static final int ROWS = 4;

    static final int MAX_CELL_SLOTS = 65_536;

    private static final int MAX_WIDTH = 1_024;

    private final LimitDefinition geometry;

    private final long cellWindowMillis;

    private final int cellSlots;

    private final int width;

    private final SlidingWindowCounter.Geometry cellGeometry;

    private final long[] seeds = new long[ROWS];

    private final SlidingWindowCounter[] cells;

    /**
     * Creates an empty sketch for a limit's geometry.
     * @param definition the limit; its algorithm, window and sub-windows shape the cells
     */
    public OverflowSketch(LimitDefinition definition) {
        this.geometry = definition;
        long windowMillis = definition.windowMillis();
        if (definition.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER) {
            this.cellWindowMillis = windowMillis;
            this.cellSlots = definition.subWindows();
        }
        else {
            int slots = finestDivisor(windowMillis);
            this.cellWindowMillis = windowMillis + windowMillis / slots;
            this.cellSlots = slots + 1;
        }
        this.width = Math.max(1, Math.min(MAX_WIDTH, MAX_CELL_SLOTS / (ROWS * this.cellSlots)));
        this.cells = new SlidingWindowCounter[ROWS * this.width];
        this.cellGeometry = new SlidingWindowCounter.Geometry(this.cellWindowMillis, this.cellSlots);
        SplittableRandom random = new SplittableRandom();
        for (int row = 0; row < ROWS; row++) {
            this.seeds[row] = random.nextLong();
        }
    }

    /**
     * The counter through which {@code key} is decided in this sketch.
     * @param key the key as stored: the key itself, or the digest of a long one
     * @param digest whether {@code key} is a digest: digests hash apart from every key that spells
     * the same characters
     * @param superseded tells, under the sketch's monitor, whether the key has since got a counter of
     * its own; the returned counter then decides nothing, so the caller looks the key up again
     * @return a counter over the key's cells, for this call only
     */
    public WindowCounter counterFor(String key, boolean digest, BooleanSupplier superseded) {
        return new SketchedCounter(this, key, digest, cellsOf(key, digest), superseded);
    }

    /**
     * Whether {@code key} has nothing counted here, so that it may start a counter of its own from
     * zero. Run {@code then} under the sketch's monitor when it has not, so that no decision through
     * the sketch can slip in between.
     * @param key the key as stored
     * @param digest whether {@code key} is a digest
     * @param nowMillis the current time
     * @param then what to do when the key holds nothing here
     * @return whether the key held nothing (and {@code then} ran)
     */
    public boolean whenEmptyFor(String key, boolean digest, long nowMillis, Runnable then) {
        int[] indices = cellsOf(key, digest);
        synchronized (this) {
            for (int index : indices) {
                SlidingWindowCounter cell = this.cells[index];
                if (cell != null) {
                    cell.advance(nowMillis);
                }
                if (cell == null || cell.used() == 0) {
                    then.run();
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Whether the sketch counts the way {@code definition} asks.
     * @param definition a limit's definition
     * @return {@code true} if the algorithm, window and sub-windows are the same
     */
    public boolean countsFor(LimitDefinition definition) {
        return definition == this.geometry || (definition.algorithm() == this.geometry.algorithm()
                && definition.subWindows() == this.geometry.subWindows()
                && definition.window().equals(this.geometry.window()));
    }

    long windowMillis() {
        return this.geometry.windowMillis();
    }

    /** The cell at {@code index}, created on first use; with the lock held. */
    SlidingWindowCounter cell(int index, long nowMillis) {
        SlidingWindowCounter cell = this.cells[index];
        if (cell == null) {
            cell = new SlidingWindowCounter(this.cellGeometry, nowMillis);
            this.cells[index] = cell;
        }
        return cell;
    }

    private int[] cellsOf(String key, boolean digest) {
        int[] indices = new int[ROWS];
        for (int row = 0; row < ROWS; row++) {
            long seed = digest ? ~this.seeds[row] : this.seeds[row];
            indices[row] = row * this.width + (int) Math.floorMod(hash(key, seed), (long) this.width);
        }
        return indices;
    }

    /**
     * FNV-1a over the key's characters from a random offset, then a 64-bit finalizer: not guessable.
     * Digests start from another offset than keys, so a key that spells a digest shares no cells with it
     * by construction (only by chance, as any two keys may).
     */
    private static long hash(String key, long seed) {
        long hash = seed;
        for (int i = 0; i < key.length(); i++) {
            hash = (hash ^ key.charAt(i)) * 0x100000001b3L;
        }
        hash ^= hash >>> 33;
        hash *= 0xff51afd7ed558ccdL;
        hash ^= hash >>> 33;
        hash *= 0xc4ceb9fe1a85ec53L;
        return hash ^ (hash >>> 33);
    }

    /** The largest of 10, 5, 4, 2, 1 that divides the window: slots of the sketched log's cells. */
    private static int finestDivisor(long windowMillis) {
        for (int slots : new int[] { 10, 5, 4, 2 }) {
            if (windowMillis % slots == 0) {
                return slots;
            }
        }
        return 1;
    }

}
