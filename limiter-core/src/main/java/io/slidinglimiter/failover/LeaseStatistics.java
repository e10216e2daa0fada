package io.slidinglimiter.failover;

import java.util.concurrent.atomic.LongAdder;

/** A limit's lease counts since start, counted by any number of threads. */
final class LeaseStatistics {

    final LongAdder fromLease = new LongAdder();

    final LongAdder fromServer = new LongAdder();

    final LongAdder leasesTaken = new LongAdder();

    final LongAdder givenBack = new LongAdder();

    final LongAdder lost = new LongAdder();

    /** @return the counts now */
    LeaseCounts counts() {
        return new LeaseCounts(this.fromLease.sum(), this.fromServer.sum(), this.leasesTaken.sum(),
                this.givenBack.sum(), this.lost.sum());
    }

}
