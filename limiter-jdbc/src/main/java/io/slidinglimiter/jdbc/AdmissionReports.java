package io.slidinglimiter.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.failover.RemoteBackend.Admitted;
import io.slidinglimiter.failover.UnreportableKeys;

/**
 * Counts in the database what the failure policy admitted while it did not decide, as a settle counts
 * a charge beyond the cost.
 * <p>
 * Up to {@value #KEYS_PER_REPORT} keys a statement. A statement that fails for its keys' own data or
 * rows (a value the database refuses, a row another session holds) is sent again key by key, so that
 * one key never holds back the others' reports: a key that fails alone too is logged once per limit
 * and dropped ({@link UnreportableKeys}). A failure of the database itself keeps what is left for the
 * next report.
 */
final class AdmissionReports {

    /** The most keys one report counts in one statement. */
    static final int KEYS_PER_REPORT = 100;

    /**
     * Sends one settle statement.
     */
    @FunctionalInterface
    interface Settle {

        /**
         * Counts permits on each key's row now, whether or not they fit.
         * @param requests each key's limit and key
         * @param permits each key's permits
         */
        void send(List<LimitRequest> requests, long[] permits);

    }

    private final Settle settle;

    /** Whether a failure is the statement's keys' own, not the database's. */
    private final Predicate<Throwable> keysOwn;

    private final Executor background;

    private final UnreportableKeys unreportable = new UnreportableKeys("PostgreSQL");

    /**
     * @param settle sends one settle statement
     * @param keysOwn whether a failure is the keys' own data or rows', not the database's
     * @param background where reports run, off the callers' threads
     */
    AdmissionReports(Settle settle, Predicate<Throwable> keysOwn, Executor background) {
        this.settle = settle;
        this.keysOwn = keysOwn;
        this.background = background;
    }

    /**
     * Counts permits that the failure policy admitted, in the background.
     * @param admitted the permits of each key
     * @return completes with what could not be counted (the database failed), empty when all was
     */
    CompletionStage<List<Admitted>> count(List<Admitted> admitted) {
        return CompletableFuture.supplyAsync(() -> {
            for (int from = 0; from < admitted.size(); from += KEYS_PER_REPORT) {
                List<Admitted> part = admitted.subList(from, Math.min(admitted.size(), from + KEYS_PER_REPORT));
                try {
                    send(part);
                }
                catch (RuntimeException ex) {
                    int done = this.keysOwn.test(ex) ? sendEachAlone(part) : 0;
                    if (done < part.size()) {
                        return List.copyOf(admitted.subList(from + done, admitted.size()));
                    }
                }
            }
            return List.<Admitted>of();
        }, this.background);
    }

    private void send(List<Admitted> part) {
        List<LimitRequest> requests = new ArrayList<>(part.size());
        long[] permits = new long[part.size()];
        for (int i = 0; i < part.size(); i++) {
            requests.add(new LimitRequest(part.get(i).limit(), part.get(i).key(), 1));
            permits[i] = part.get(i).permits();
        }
        this.settle.send(requests, permits);
    }

    /**
     * Counts each key's admissions in a statement of its own; a key the database fails for its own data
     * is logged and dropped.
     * @return how many keys were counted or dropped: fewer than all when the database failed, and what is
     * left waits for the next report
     */
    private int sendEachAlone(List<Admitted> part) {
        for (int i = 0; i < part.size(); i++) {
            try {
                send(List.of(part.get(i)));
            }
            catch (RuntimeException ex) {
                if (!this.keysOwn.test(ex)) {
                    return i;
                }
                this.unreportable.dropped(part.get(i), ex);
            }
        }
        return part.size();
    }

}
