package io.slidinglimiter.local;

import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.LimitDefinition;

/**
 * Where a limit counts the keys that get no counter of their own because the store is full: a
 * count-min sketch whose cells count in time-aligned slots. A key is counted in one cell of each of
 * {@value #ROWS} rows, chosen by seeded hashes; its count is the smallest of its cells, and every
 * cell holds at least the count of each key hashed to it, so the sketch can only over-estimate: it
 * may reject a key that had room (when others share its cells), never admit one that had none.
 * <p>
 * <b>Time.</b> Cells count in slots aligned to absolute time and shared by every cell: a sliding
 * window counter's own sub-windows (up to {@value #MAX_POSITIONS}, for a limit whose cells take one
 * byte), so that a permit leaves the sketch when it would leave the key's counter; else {@code k + 1}
 * slots of {@code window / k} (k the largest of 4, 2, 1 that divides the window; at most 1 for
 * four-byte cells), a permit staying up to one slot longer than the window, so that it is never
 * forgotten before the limit's own counter (a finer one, or a log) would forget it. When time moves
 * into a slot, its column is cleared in one fill.
 * <p>
 * <b>Size.</b> Sized to the flood it must absorb: with {@code capacityKeys} new keys per window,
 * each kept for up to {@code retention} windows, {@code capacityKeys * retention / 2} cells per row
 * keep about two keys per cell, and a new key is then falsely refused only when all four of its
 * cells hold its limit already: under 1 % for limits of 3 or more, under 0.001 % for 5 or more. A
 * cell takes the fewest bytes its limit needs ({@link SketchCells}), so the cells take at most
 * {@value #BYTES_PER_KEY} bytes per key of capacity (24 for a limit under 255 permits with up to 12
 * sub-windows): ten times the store's bound in new keys costs about what the bound's own counters
 * do. They are made when the limit first overflows: a limit that never does costs nothing.
 */
final class OverflowSketch {

    static final int ROWS = 4;

    /** The fewest cells per row, whatever the capacity. */
    static final int MIN_WIDTH = 1_024;

    /** The most cells per row: 8 M keys of capacity kept one window. */
    static final int MAX_WIDTH = 1 << 22;

    /** The most slots a cell counts in: a limit's own sub-windows up to this many, else five. */
    static final int MAX_POSITIONS = 12;

    /**
     * The most bytes the cells take per key of capacity: four-byte cells in two slots, kept up to two
     * windows (one byte in twelve slots takes 24, two bytes in five slots 25).
     */
    static final int BYTES_PER_KEY = 32;

    private final LimitDefinition geometry;

    private final long slotMillis;

    private final int positions;

    private final int width;

    private final long[] seeds = new long[ROWS];

    /** The limit's permits per window when the sketch was made, which sizes its cells. */
    private final long limit;

    /** Counts by slot position, then cell ({@code row * width + column}); null until the first permit. */
    private SketchCells counts;

    /** The absolute slot (epoch millis / slotMillis) each position counts now. */
    private final long[] slotAt;

    /** The newest slot counted in. */
    private long newestSlot = Long.MIN_VALUE;

    /**
     * Creates an empty sketch for a limit's geometry.
     * @param definition the limit; its window shapes the cells
     * @param capacityKeys the new keys per window it absorbs with few false refusals
     */
    OverflowSketch(LimitDefinition definition, long capacityKeys) {
        this.geometry = definition;
        this.limit = definition.limit();
        long windowMillis = definition.windowMillis();
        int cellBytes = SketchCells.bytesPerCell(this.limit);
        double retention;
        if (definition.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER && definition.subWindows() <= MAX_POSITIONS
                && cellBytes == 1) {
            // The limit's own sub-windows: a key's permits leave the sketch exactly when they would leave its counter.
            this.slotMillis = windowMillis / definition.subWindows();
            this.positions = definition.subWindows();
            retention = 1;
        }
        else {
            // Wider cells in fewer, coarser slots, so that a key of capacity costs about as much.
            int slots = (cellBytes == 4) ? 1 : finestDivisor(windowMillis);
            this.slotMillis = windowMillis / slots;
            this.positions = slots + 1;
            retention = (double) this.positions / slots;
        }
        this.slotAt = new long[this.positions];
        this.width = (int) Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, (long) Math.ceil(capacityKeys * retention / 2)));
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
    WindowCounter counterFor(String key, boolean digest, BooleanSupplier superseded) {
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
    boolean whenEmptyFor(String key, boolean digest, long nowMillis, Runnable then) {
        synchronized (this) {
            if (this.counts != null) {
                advance(nowMillis);
                if (used(cellsOf(key, digest)) > 0) {
                    return false;
                }
            }
            then.run();
            return true;
        }
    }

    /**
     * Whether the sketch counts the way {@code definition} asks.
     * @param definition a limit's definition
     * @return {@code true} if the algorithm, window and sub-windows are the same
     */
    boolean countsFor(LimitDefinition definition) {
        return definition == this.geometry || (definition.algorithm() == this.geometry.algorithm()
                && definition.subWindows() == this.geometry.subWindows()
                && definition.window().equals(this.geometry.window()));
    }

    long windowMillis() {
        return this.geometry.windowMillis();
    }

    /** @return the bytes the cells take now: none until the limit first overflows */
    synchronized long bytes() {
        return (this.counts != null) ? this.counts.bytes() : 0;
    }

    // The methods below run holding the sketch's monitor.

    /** Moves to the slot of {@code nowMillis}, clearing the columns of the slots that left the window. */
    void advance(long nowMillis) {
        long slot = Math.floorDiv(nowMillis, this.slotMillis);
        if (this.counts == null || slot <= this.newestSlot) {
            // Nothing counted yet; or the same slot, or a clock that stepped back: counted in the newest.
            return;
        }
        long from = Math.max(this.newestSlot + 1, slot - this.positions + 1);
        for (long entering = from; entering <= slot; entering++) {
            int position = (int) Math.floorMod(entering, (long) this.positions);
            this.counts.clear(position);
            this.slotAt[position] = entering;
        }
        this.newestSlot = slot;
    }

    /** The count of a key: the smallest of its cells. */
    long used(int[] cells) {
        if (this.counts == null) {
            return 0;
        }
        long smallest = Long.MAX_VALUE;
        for (int cell : cells) {
            smallest = Math.min(smallest, sum(cell));
        }
        return smallest;
    }

    /** Counts {@code cost} permits of a key in each of its cells, in the newest slot. */
    void add(int[] cells, long nowMillis, long cost) {
        if (this.counts == null) {
            this.counts = SketchCells.forLimit(this.limit, this.positions, ROWS * this.width);
            this.newestSlot = Long.MIN_VALUE;
            advance(nowMillis);
        }
        int newest = (int) Math.floorMod(this.newestSlot, (long) this.positions);
        for (int cell : cells) {
            // Saturates: a full cell counts as holding more than any limit (an over-estimate).
            this.counts.add(newest, cell, cost);
        }
    }

    /** Zero when {@code cost} fits; else the time until the first of the key's cells has room for it. */
    long retryAfterMillis(int[] cells, long nowMillis, long cost, long limit) {
        if (used(cells) + cost <= limit) {
            return 0;
        }
        long soonest = Long.MAX_VALUE;
        for (int cell : cells) {
            long excess = sum(cell) + cost - limit;
            long freed = 0;
            for (long slot = this.newestSlot - this.positions + 1; slot <= this.newestSlot && freed < excess; slot++) {
                int position = (int) Math.floorMod(slot, (long) this.positions);
                if (this.slotAt[position] == slot) {
                    freed += this.counts.get(position, cell);
                }
                if (freed >= excess) {
                    soonest = Math.min(soonest, expiryOf(slot) - nowMillis);
                }
            }
        }
        return (soonest == Long.MAX_VALUE) ? expiryOf(this.newestSlot) - nowMillis : Math.max(0, soonest);
    }

    /** The time until the key's count is zero: until the first of its cells is empty. */
    long resetAfterMillis(int[] cells, long nowMillis) {
        if (this.counts == null) {
            return 0;
        }
        long soonest = Long.MAX_VALUE;
        for (int cell : cells) {
            long emptyAt = nowMillis;
            for (long slot = this.newestSlot - this.positions + 1; slot <= this.newestSlot; slot++) {
                int position = (int) Math.floorMod(slot, (long) this.positions);
                if (this.slotAt[position] == slot && this.counts.get(position, cell) > 0) {
                    emptyAt = expiryOf(slot);
                }
            }
            soonest = Math.min(soonest, emptyAt - nowMillis);
        }
        return Math.max(0, soonest);
    }

    /** When the permits of a slot leave every cell: one slot after the window would let them go. */
    private long expiryOf(long slot) {
        return (slot + this.positions) * this.slotMillis;
    }

    /** A cell's count over the slots in the window; a saturated slot counts as more than any limit. */
    private long sum(int cell) {
        long sum = 0;
        for (long slot = this.newestSlot - this.positions + 1; slot <= this.newestSlot; slot++) {
            int position = (int) Math.floorMod(slot, (long) this.positions);
            if (this.slotAt[position] == slot) {
                int count = this.counts.get(position, cell);
                if (count == SketchCells.SATURATED) {
                    return Long.MAX_VALUE / 2;
                }
                sum += count;
            }
        }
        return sum;
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

    /** The largest of 4, 2, 1 that divides the window: the slots per window of the cells. */
    private static int finestDivisor(long windowMillis) {
        for (int slots : new int[] { 4, 2 }) {
            if (windowMillis % slots == 0) {
                return slots;
            }
        }
        return 1;
    }

}
