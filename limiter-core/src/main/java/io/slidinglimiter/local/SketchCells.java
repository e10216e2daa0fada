package io.slidinglimiter.local;

/**
 * The counts of an {@link OverflowSketch}'s cells, one array per time slot, in the fewest bytes a cell
 * of the limit needs.
 * <p>
 * A cell counts a limit's permits in one slot; a limit of at most {@value #BYTE_LIMIT} permits needs
 * one byte a cell, of at most {@value #SHORT_LIMIT} two, else four. A cell's slots lie side by side, so
 * that a key's count (the sum of its cells' slots) reads one cache line a cell, not one a slot; a
 * slot's column is cleared with a stride, once each time time enters it. A cell saturates at its type's
 * largest value, which then reads as more than any limit: an over-estimate, as the sketch may only
 * make (a limit raised at run time past its cells' range refuses more, never admits more).
 */
abstract sealed class SketchCells {

    /** The largest limit one-byte cells count: 255 is their saturated value. */
    static final long BYTE_LIMIT = 254;

    /** The largest limit two-byte cells count: 65 535 is their saturated value. */
    static final long SHORT_LIMIT = 65_534;

    /** What {@link #get} answers for a saturated cell. */
    static final int SATURATED = Integer.MAX_VALUE;

    /**
     * Cells for a limit.
     * @param limit the limit's permits per window
     * @param positions the slots each cell counts in
     * @param cells the cells per slot
     * @return cells of the fewest bytes that count the limit
     */
    static SketchCells forLimit(long limit, int positions, int cells) {
        return switch (bytesPerCell(limit)) {
            case 1 -> new Bytes(positions, cells);
            case 2 -> new Shorts(positions, cells);
            default -> new Ints(positions, cells);
        };
    }

    /**
     * The bytes one cell of a limit takes.
     * @param limit the limit's permits per window
     * @return 1, 2 or 4
     */
    static int bytesPerCell(long limit) {
        return (limit <= BYTE_LIMIT) ? 1 : (limit <= SHORT_LIMIT) ? 2 : 4;
    }

    /** The slots each cell counts in. */
    private final int positions;

    /** Cells times slots: the length of the counts. */
    private final int length;

    /**
     * @param positions the slots each cell counts in
     * @param cells the cells
     */
    SketchCells(int positions, int cells) {
        this.positions = positions;
        this.length = positions * cells;
    }

    /** @return a cell's count in a slot's position; {@link #SATURATED} once it saturated */
    final int get(int position, int cell) {
        return read(cell * this.positions + position);
    }

    /** Adds permits to a cell, saturating. */
    final void add(int position, int cell, long permits) {
        addAt(cell * this.positions + position, permits);
    }

    /** Empties every cell of a slot's position. */
    final void clear(int position) {
        for (int at = position; at < this.length; at += this.positions) {
            zero(at);
        }
    }

    /** @return the bytes the counts take */
    final long bytes() {
        return (long) this.length * cellBytes();
    }

    /** @return the count at an index of the counts; {@link #SATURATED} once it saturated */
    abstract int read(int at);

    /** Adds permits at an index of the counts, saturating. */
    abstract void addAt(int at, long permits);

    /** Empties the count at an index of the counts. */
    abstract void zero(int at);

    /** @return the bytes one count takes */
    abstract int cellBytes();

    /** One byte a cell, 255 saturated. */
    static final class Bytes extends SketchCells {

        private final byte[] counts;

        Bytes(int positions, int cells) {
            super(positions, cells);
            this.counts = new byte[positions * cells];
        }

        @Override
        int read(int at) {
            int count = this.counts[at] & 0xFF;
            return (count == 0xFF) ? SATURATED : count;
        }

        @Override
        void addAt(int at, long permits) {
            this.counts[at] = (byte) Math.min(0xFF, (this.counts[at] & 0xFF) + permits);
        }

        @Override
        void zero(int at) {
            this.counts[at] = 0;
        }

        @Override
        int cellBytes() {
            return 1;
        }

    }

    /** Two bytes a cell, 65 535 saturated. */
    static final class Shorts extends SketchCells {

        private final char[] counts;

        Shorts(int positions, int cells) {
            super(positions, cells);
            this.counts = new char[positions * cells];
        }

        @Override
        int read(int at) {
            int count = this.counts[at];
            return (count == 0xFFFF) ? SATURATED : count;
        }

        @Override
        void addAt(int at, long permits) {
            this.counts[at] = (char) Math.min(0xFFFF, this.counts[at] + permits);
        }

        @Override
        void zero(int at) {
            this.counts[at] = 0;
        }

        @Override
        int cellBytes() {
            return 2;
        }

    }

    /** Four bytes a cell, {@link Integer#MAX_VALUE} saturated. */
    static final class Ints extends SketchCells {

        private final int[] counts;

        Ints(int positions, int cells) {
            super(positions, cells);
            this.counts = new int[positions * cells];
        }

        @Override
        int read(int at) {
            return this.counts[at];
        }

        @Override
        void addAt(int at, long permits) {
            this.counts[at] = (int) Math.min(Integer.MAX_VALUE, this.counts[at] + permits);
        }

        @Override
        void zero(int at) {
            this.counts[at] = 0;
        }

        @Override
        int cellBytes() {
            return 4;
        }

    }

}
