package io.slidinglimiter.core;

import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.ModelChecking;

/**
 * Model-checked linearizability of {@link PerThreadCount}, the statistics' count: Lincheck explores
 * the interleavings of additions and sums of three threads, with one cell (the first thread to add
 * claims it, the others add to the shared adder: the claim's race and both paths) and with a cell
 * for each thread, and checks every outcome against a plain {@code long}. A cell written with a plain
 * read-and-write by two threads (a claim that is not a compare-and-set) fails it. A few seconds.
 */
class PerThreadCountLincheckTests {

    @Test
    void oneCellClaimedByOneThreadAndTheRestInTheSharedAdderCountEveryAddition() {
        check(OneCell.class);
    }

    @Test
    void threadsInCellsOfTheirOwnCountEveryAddition() {
        check(FourCells.class);
    }

    private static void check(Class<?> scenario) {
        ModelChecking.options(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Model.class)
                .check(scenario);
    }

    /** The operations, on a count of as many cells as the scenario gives. */
    public abstract static class Scenario {

        private final PerThreadCount count;

        Scenario(int cells) {
            this.count = new PerThreadCount(cells);
        }

        @Operation
        public void increment() {
            this.count.increment();
        }

        @Operation
        public long sum() {
            return this.count.sum();
        }

    }

    /** Every thread but the claimant of the only cell adds to the shared adder. */
    public static class OneCell extends Scenario {

        public OneCell() {
            super(1);
        }

    }

    /**
     * Lincheck's consecutive thread ids take a cell each. Four cells rather than the statistics'
     * 64: Lincheck takes a loop of more than 50 turns, as {@code sum()}'s over 64 cells, for a hang.
     */
    public static class FourCells extends Scenario {

        public FourCells() {
            super(4);
        }

    }

    /** A plain count. */
    public static final class Model {

        private long count;

        public void increment() {
            this.count++;
        }

        public long sum() {
            return this.count;
        }

    }

}
