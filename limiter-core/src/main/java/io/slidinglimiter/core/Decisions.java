package io.slidinglimiter.core;

import java.time.Duration;
import java.util.List;

import io.slidinglimiter.Decision;

/**
 * The outcome of one all-or-nothing decision over several limits: admitted only when every limit
 * admitted, in which case each consumed; otherwise none consumed.
 *
 * @param allowed whether every limit admitted the call
 * @param decisions one decision per limit, in the order they were asked for; when the call was
 * rejected, each tells whether its own limit would have admitted it
 * @param decidedAtMillis the backend's time of the decision, which a
 * {@link RateLimitBackend#refund refund} needs to find what it took
 * @param generation the generation of the counters the decision counted in, which a refund or a settle
 * compares with theirs so that it gives back nothing a reset forgot, whatever the clocks say (a
 * backend's own numbering: the local backend's resets, Redis's microseconds); 0 when unknown,
 * and then a refund goes by {@code decidedAtMillis} alone
 * @param parts for a decision taken group by group ({@link io.slidinglimiter.internal.SplitDecision}: several backends, or
 * several Redis Cluster slots), each admitted group's own decisions and time, in the order decided,
 * so that a refund gives each group back by its own clock; empty for a decision taken in one step
 */
public record Decisions(boolean allowed, List<Decision> decisions, long decidedAtMillis, long generation,
        List<Decisions> parts) {

    /**
     * Copies the lists: the decisions cannot change after the fact.
     * @param allowed whether every limit admitted the call
     * @param decisions one decision per limit
     * @param decidedAtMillis the backend's time of the decision
     * @param generation the generation of the counters the decision counted in; 0 when unknown
     * @param parts each admitted group's own decisions, for a decision taken group by group
     */
    public Decisions {
        decisions = List.copyOf(decisions);
        parts = List.copyOf(parts);
    }

    /**
     * Decisions taken group by group, of no one generation.
     * @param allowed whether every limit admitted the call
     * @param decisions one decision per limit
     * @param decidedAtMillis the backend's time of the decision
     * @param parts each admitted group's own decisions
     */
    public Decisions(boolean allowed, List<Decision> decisions, long decidedAtMillis, List<Decisions> parts) {
        this(allowed, decisions, decidedAtMillis, 0, parts);
    }

    /**
     * Decisions taken in one step, in counters of one generation.
     * @param allowed whether every limit admitted the call
     * @param decisions one decision per limit
     * @param decidedAtMillis the backend's time of the decision
     * @param generation the generation of the counters the decision counted in; 0 when unknown
     */
    public Decisions(boolean allowed, List<Decision> decisions, long decidedAtMillis, long generation) {
        this(allowed, decisions, decidedAtMillis, generation, List.of());
    }

    /**
     * Decisions taken in one step, of an unknown generation.
     * @param allowed whether every limit admitted the call
     * @param decisions one decision per limit
     * @param decidedAtMillis the backend's time of the decision
     */
    public Decisions(boolean allowed, List<Decision> decisions, long decidedAtMillis) {
        this(allowed, decisions, decidedAtMillis, 0, List.of());
    }

    /**
     * Decisions without a time, for callers that will not refund them.
     * @param allowed whether every limit admitted the call
     * @param decisions one decision per limit
     */
    public Decisions(boolean allowed, List<Decision> decisions) {
        this(allowed, decisions, 0);
    }

    /**
     * The decision of the limit at {@code index}, in the order asked.
     * @param index the position of the limit
     * @return its decision
     */
    public Decision get(int index) {
        return this.decisions.get(index);
    }

    /**
     * How long the caller should wait: the longest wait of the limits that rejected.
     * @return {@link Duration#ZERO} when allowed
     */
    public Duration retryAfter() {
        long longest = 0;
        for (Decision decision : this.decisions) {
            longest = Math.max(longest, decision.retryAfterMillis());
        }
        return Duration.ofMillis(longest);
    }

}
