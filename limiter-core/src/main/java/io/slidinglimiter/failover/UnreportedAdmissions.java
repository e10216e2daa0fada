package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.failover.RemoteBackend.Admitted;

/**
 * What the failure policy admitted while the server did not decide ({@code fail-open}, {@code local}),
 * kept per key until the server counts it.
 * <p>
 * Counted there once the server answers again, so that its count, every instance's later decisions
 * and the endpoint's {@code used} include it: nothing admitted is lost. The permits are counted when they are reported, not in the sub-window they were admitted
 * in: they leave the window at most the outage's length later than they would have (an over-count,
 * never an under-count). Permits whose newest admission has left the window by then are not
 * reported. At most {@code maxKeys} keys are kept; the admissions of more keys are counted in
 * {@link #dropped()} and not reported. One report at a time: a server that has just come back is not
 * flooded with them.
 */
final class UnreportedAdmissions {

    /** Counts permits on the server. */
    @FunctionalInterface
    interface Reporter {

        /**
         * Counts permits on the server, in the background.
         * @param admitted what to count, per key
         * @return completes with what could not be counted (empty when all was)
         */
        CompletionStage<List<Admitted>> count(List<Admitted> admitted);

    }

    private final Map<Key, Admitted> pending = new ConcurrentHashMap<>();

    private final int maxKeys;

    private final LongAdder reported = new LongAdder();

    private final LongAdder dropped = new LongAdder();

    private final AtomicBoolean reporting = new AtomicBoolean();

    /** Set with every admission kept, cleared by a report that took everything: the hot path reads only this. */
    private volatile boolean any;

    /** @param maxKeys the most keys kept at once */
    UnreportedAdmissions(int maxKeys) {
        this.maxKeys = maxKeys;
    }

    /**
     * Keeps permits that a fallback admitted, or adds a settle's difference to them.
     * @param limit the limit in force
     * @param key the counter key
     * @param permits permits admitted (or, from a settle, the charge minus the cost: below zero gives back)
     * @param nowMillis the time, on the backend's clock
     */
    void add(LimitDefinition limit, String key, long permits, long nowMillis) {
        if (permits == 0) {
            return;
        }
        Key id = new Key(limit.name(), key);
        if (permits > 0 && this.pending.size() >= this.maxKeys && !this.pending.containsKey(id)) {
            this.dropped.add(permits);
            return;
        }
        this.pending.compute(id, (ignored, before) -> {
            long total = ((before != null) ? before.permits() : 0) + permits;
            return (total > 0) ? new Admitted(limit, key, total, nowMillis) : null;
        });
        this.any = true;
    }

    /** @return whether admissions wait to be reported */
    boolean isEmpty() {
        return !this.any;
    }

    /**
     * Reports what is kept for the keys whose shard has answered, unless a report is under way; what
     * the server could not count is kept for the next report.
     * @param reporter counts permits on the server
     * @param nowMillis the time, on the backend's clock
     * @param answering whether a key's shard is answering now (a Cluster shard that fails keeps its keys' permits)
     */
    void report(Reporter reporter, long nowMillis, Predicate<Admitted> answering) {
        if (!this.any || !this.reporting.compareAndSet(false, true)) {
            return;
        }
        this.any = false;
        List<Admitted> taken = new ArrayList<>();
        for (Map.Entry<Key, Admitted> entry : this.pending.entrySet()) {
            Admitted each = entry.getValue();
            if (!answering.test(each)) {
                this.any = true;
            }
            else if (!this.pending.remove(entry.getKey(), each)) {
                this.any = true;
            }
            else if (nowMillis - each.lastAtMillis() < each.limit().windowMillis()) {
                taken.add(each);
            }
        }
        if (taken.isEmpty()) {
            this.reporting.set(false);
            return;
        }
        reporter.count(taken).whenComplete((notCounted, failure) -> {
            List<Admitted> again = (failure != null) ? taken : notCounted;
            long sent = taken.stream().mapToLong(Admitted::permits).sum();
            long back = again.stream().mapToLong(Admitted::permits).sum();
            this.reported.add(sent - back);
            again.forEach((each) -> add(each.limit(), each.key(), each.permits(), each.lastAtMillis()));
            this.reporting.set(false);
        });
    }

    /** @return permits counted on the server after the fact since start */
    long reported() {
        return this.reported.sum();
    }

    /** @return permits admitted by fallbacks that could not be kept for the server (too many keys) */
    long dropped() {
        return this.dropped.sum();
    }

    private record Key(String limitName, String key) {
    }

}
