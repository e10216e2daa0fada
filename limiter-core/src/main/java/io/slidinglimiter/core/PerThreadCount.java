package io.slidinglimiter.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;

/**
 * An exact count that most threads add to without a locked instruction: a decision's statistics,
 * counted once per call on the hottest path there is.
 * <p>
 * A {@link LongAdder} costs a locked compare-and-set per addition even on one thread (about a
 * sixth of a local decision). Here a thread owns a cell, chosen by its id and claimed once by a
 * compare-and-set, and is that cell's only writer: it adds with a plain read of its own count and
 * an opaque write, which a reader sees whole. A thread whose cell another thread owns adds to a
 * {@code LongAdder}. Thread ids are handed out in sequence, so a pool of up to {@value #CELLS}
 * threads started together owns a cell each; a larger pool (Tomcat's 200 request threads) or
 * short-lived threads (virtual threads) share the adder beyond that, as every thread did before.
 * A cell stays with its thread for the count's life: its count stays in the sum, and a thread that
 * ended gives its cell to nobody.
 * <p>
 * {@link #sum()} adds the cells and the adder without a lock: exact once the additions it must see
 * happened before it (a joined thread's, a completed call's); during additions, a value between the
 * count at its start and at its end, as {@code LongAdder.sum()} gives.
 */
final class PerThreadCount {

    /** The cells, a power of two. */
    static final int CELLS = 64;

    /**
     * Longs from one cell to the next: 64 bytes, so that two threads' counts never share a cache
     * line (each cell's two longs sit in one line or straddle two, never the next cell's).
     */
    private static final int STRIDE = 8;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private final int mask;

    /**
     * From {@code i * STRIDE}: the owner's thread id plus one (0 while free), then its count. The
     * first line is left empty so that cell 0 sits apart from the array's header.
     */
    private final long[] cells;

    private final LongAdder shared = new LongAdder();

    PerThreadCount() {
        this(CELLS);
    }

    /**
     * A count with another number of cells: tests use one cell to send every thread but the first
     * to the shared adder.
     * @param cells the number of cells, a power of two
     */
    PerThreadCount(int cells) {
        if (Integer.bitCount(cells) != 1) {
            throw new IllegalArgumentException("cells must be a power of two but was " + cells);
        }
        this.mask = cells - 1;
        this.cells = new long[(cells + 1) * STRIDE];
    }

    /** Adds one. */
    void increment() {
        long owner = Thread.currentThread().getId() + 1;
        int cell = (((int) owner & this.mask) + 1) * STRIDE;
        long[] cells = this.cells;
        long claimedBy = (long) LONGS.getOpaque(cells, cell);
        if (claimedBy == owner || (claimedBy == 0 && LONGS.compareAndSet(cells, cell, 0L, owner))) {
            // Only this thread writes this count: its own last write is what it reads.
            LONGS.setOpaque(cells, cell + 1, cells[cell + 1] + 1);
        }
        else {
            this.shared.increment();
        }
    }

    /** @return the count */
    long sum() {
        long sum = this.shared.sum();
        for (int cell = STRIDE + 1; cell < this.cells.length; cell += STRIDE) {
            sum += (long) LONGS.getVolatile(this.cells, cell);
        }
        return sum;
    }

}
