package io.slidinglimiter.failover;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Each limit's lease counts since start, by limit name. */
final class LeaseLedger {

    private final Map<String, LeaseStatistics> statistics = new ConcurrentHashMap<>();

    /**
     * A limit's statistics, made on first use.
     * @param limitName the limit's name
     * @return its statistics, to count into
     */
    LeaseStatistics of(String limitName) {
        LeaseStatistics found = this.statistics.get(limitName);
        return (found != null) ? found : this.statistics.computeIfAbsent(limitName, (ignored) -> new LeaseStatistics());
    }

    /**
     * A limit's lease counts since start.
     * @param limitName the limit's name
     * @return its counts, zero when it never leased
     */
    LeaseCounts counts(String limitName) {
        LeaseStatistics found = this.statistics.get(limitName);
        return (found == null) ? LeaseCounts.NONE : found.counts();
    }

}
