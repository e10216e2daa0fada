package io.slidinglimiter.internal;

import java.util.ArrayList;
import java.util.List;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.Decisions;

/**
 * An all-or-nothing decision over limits that no single atomic step can cover (in several
 * backends, or in several Redis Cluster slots).
 * <p>
 * The groups are decided one after the other, in a
 * fixed order, and when one rejects, what the groups before it took is refunded exactly. Until the
 * refund lands, other callers may see those permits as used: a brief over-count, never an
 * under-count. A group that fails (its backend throws) is treated as a rejection: the groups before
 * it are refunded, and the failure is thrown. An admitted decision keeps each group's own
 * {@link Decisions#parts() part}, so that a later refund of the whole call gives each group back at
 * the time its own backend decided it.
 */
public final class SplitDecision {

    /** Decides and refunds one group of requests. */
    public interface Groups {

        /**
         * Decides one group, all or nothing.
         * @param group the group's index
         * @param requests its requests
         * @return their decisions
         */
        Decisions tryAcquireAll(int group, List<LimitRequest> requests);

        /**
         * Gives back what an admitted group took.
         * @param group the group's index
         * @param requests its requests
         * @param taken their decisions
         */
        void refund(int group, List<LimitRequest> requests, Decisions taken);

    }

    private SplitDecision() {
    }

    /**
     * Decides {@code requests} group by group.
     * @param requests every request of the call
     * @param groups the indices of the requests of each group, in the order to decide them
     * @param backend decides and refunds the groups
     * @return the decisions in the order of {@code requests}; limits of groups not reached after a
     * rejection are reported as not consulted (allowed, full quota), having consumed nothing
     */
    public static Decisions decide(List<LimitRequest> requests, List<List<Integer>> groups, Groups backend) {
        Decision[] decisions = new Decision[requests.size()];
        List<Decisions> taken = new ArrayList<>(groups.size());
        long decidedAt = 0;
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> group = groups.get(g);
            List<LimitRequest> selected = select(requests, group);
            Decisions decided;
            try {
                decided = backend.tryAcquireAll(g, selected);
            }
            catch (RuntimeException ex) {
                refundEarlier(requests, groups, backend, taken, ex);
                throw ex;
            }
            decidedAt = (g == 0) ? decided.decidedAtMillis() : decidedAt;
            for (int i = 0; i < group.size(); i++) {
                decisions[group.get(i)] = decided.get(i);
            }
            if (!decided.allowed()) {
                refundEarlier(requests, groups, backend, taken, null);
                for (int i = 0; i < decisions.length; i++) {
                    if (decisions[i] == null) {
                        long limit = requests.get(i).limit().limit();
                        decisions[i] = new Decision(true, limit, limit, 0, 0);
                    }
                }
                return new Decisions(false, List.of(decisions), decided.decidedAtMillis());
            }
            taken.add(decided);
        }
        return new Decisions(true, List.of(decisions), decidedAt, taken);
    }

    /**
     * Gives back what the groups decided so far took. After a group failed, a refund that fails too
     * is added to that failure (the permits then expire with their window: an over-count only).
     */
    private static void refundEarlier(List<LimitRequest> requests, List<List<Integer>> groups, Groups backend,
            List<Decisions> taken, RuntimeException failure) {
        for (int earlier = 0; earlier < taken.size(); earlier++) {
            try {
                backend.refund(earlier, select(requests, groups.get(earlier)), taken.get(earlier));
            }
            catch (RuntimeException ex) {
                if (failure == null) {
                    throw ex;
                }
                failure.addSuppressed(ex);
            }
        }
    }

    /**
     * The charges at some indices.
     * @param charges one per request
     * @param indices the indices to take
     * @return those charges, in the order of the indices
     */
    public static long[] select(long[] charges, List<Integer> indices) {
        long[] selected = new long[indices.size()];
        for (int i = 0; i < selected.length; i++) {
            selected[i] = charges[indices.get(i)];
        }
        return selected;
    }

    /**
     * The requests at some indices.
     * @param requests all requests
     * @param indices the indices to take
     * @return those requests, in the order of the indices
     */
    public static List<LimitRequest> select(List<LimitRequest> requests, List<Integer> indices) {
        List<LimitRequest> selected = new ArrayList<>(indices.size());
        for (int index : indices) {
            selected.add(requests.get(index));
        }
        return selected;
    }

}
