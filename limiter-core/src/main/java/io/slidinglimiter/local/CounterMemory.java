package io.slidinglimiter.local;

/**
 * The room a store gives counters that grow after they are created.
 * <p>
 * The room a store gives counters that grow after they are created (a sliding log's entries), so
 * that its bound on bytes holds while they grow, and that they give back when they shrink.
 */
interface CounterMemory {

    /** Room without a bound: for counters that no store bounds. */
    CounterMemory UNBOUNDED = new CounterMemory() {

        @Override
        public boolean tryReserve(long bytes) {
            return true;
        }

        @Override
        public void release(long bytes) {
        }

    };

    /**
     * Takes room for {@code bytes} more, if the bound allows it.
     * @param bytes the bytes a counter is about to add, positive
     * @return whether the room was taken; if not, the counter stays within what it has
     */
    boolean tryReserve(long bytes);

    /**
     * Gives back room a counter no longer uses.
     * @param bytes bytes taken before by {@link #tryReserve}
     */
    void release(long bytes);

}
