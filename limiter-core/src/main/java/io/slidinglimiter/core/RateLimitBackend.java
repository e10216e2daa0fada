package io.slidinglimiter.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.slidinglimiter.Decision;

/**
 * Where counters live, in-process or in a shared store: the service provider interface of every backend.
 * <p>
 * Counters are
 * addressed by limit name and key, so every definition of the same name counts in the same window.
 * Implementations are thread-safe and take their time from a {@link TimeSource}.
 */
public interface RateLimitBackend extends AutoCloseable {

    /**
     * Admits {@code cost} permits of {@code limit} for {@code key} if they fit.
     * @param limit the limit's definition; its current {@code limit} applies
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return the decision
     * @throws IllegalArgumentException for a blank key or a cost outside 1..limit
     */
    Decision tryAcquire(LimitDefinition limit, String key, long cost);

    /**
     * {@link #tryAcquire}, answering only whether the permits were taken: for callers that need no
     * more, so that a backend that can decide without building a {@link Decision} does (the local
     * backend allocates nothing here). By default, {@link #tryAcquire}'s answer.
     * @param limit the limit's definition; its current {@code limit} applies
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return whether the permits were taken
     * @throws IllegalArgumentException for a blank key or a cost outside 1..limit
     */
    default boolean admit(LimitDefinition limit, String key, long cost) {
        return tryAcquire(limit, key, cost).allowed();
    }

    /**
     * {@link #tryAcquire}, answering with a {@link Decision} only for a rejection: for callers that
     * need the numbers only to refuse the call. One decision, as a timer or an observation of the
     * backend counts it; by default {@link #tryAcquire}'s.
     * @param limit the limit's definition; its current {@code limit} applies
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return null when the permits were taken; else the rejection
     * @throws IllegalArgumentException for a blank key or a cost outside 1..limit
     */
    default Decision acquireOrReject(LimitDefinition limit, String key, long cost) {
        Decision decision = tryAcquire(limit, key, cost);
        return decision.allowed() ? null : decision;
    }

    /**
     * Admits the call only if every request fits; otherwise consumes from none.
     * @param requests distinct (limit name, key) pairs
     * @return the decisions, in the order of the requests
     */
    Decisions tryAcquireAll(List<LimitRequest> requests);

    /**
     * Gives back exactly what an admitted {@link #tryAcquireAll} took: the undo for a call whose
     * limits live in several backends (or Redis Cluster slots) and that a later one rejected.
     * Permits that have left the window meanwhile are not given back twice.
     * @param requests the requests that were admitted together
     * @param taken their decisions, allowed, with the time they were decided at
     */
    void refund(List<LimitRequest> requests, Decisions taken);

    /**
     * Settles what an admitted {@link #tryAcquireAll} took to what each limit finally charges, once
     * the call ran: a charge below the cost gives the difference back to the sub-window the permits
     * came from (as {@link #refund} does); a charge above it counts the difference now,
     * unconditionally, so that the key may pass its limit. A charge equal to the cost changes nothing.
     * @param requests the requests that were admitted together, with the cost each took
     * @param taken their decisions, allowed, with the time they were decided at
     * @param charges what each request finally costs, zero or more, in the order of the requests
     */
    void settle(List<LimitRequest> requests, Decisions taken, long[] charges);

    /**
     * What a call of cost 1 would be told now, without consuming anything.
     * @param limit the limit's definition
     * @param key the counter key, not blank
     * @return the decision that call would get
     */
    Decision peek(LimitDefinition limit, String key);

    /**
     * What {@code key} holds in {@code limit} now, without consuming anything: {@link #peek}, with the
     * count itself, which charges may carry past the limit. By default read from {@link #peek}, which
     * cannot tell a count past the limit from one at it.
     * @param limit the limit's definition
     * @param key the counter key, not blank
     * @return the key's usage
     */
    default KeyUsage usage(LimitDefinition limit, String key) {
        Decision decision = peek(limit, key);
        return new KeyUsage(decision.limit() - decision.remaining(), decision);
    }

    /**
     * What {@code key} holds in {@code limit} now, and what a call of {@code cost} would be told
     * (its {@code retryAfter}: when that many permits will be free), without consuming anything.
     * <pre>{@code
     * Duration wait = backend.usage(budget, "alice", 2_000).decision().retryAfter();
     * }</pre>
     * @param limit the limit's definition
     * @param key the counter key, not blank
     * @param cost the permits the call would ask, between 1 and the limit
     * @return the key's usage, decided for that cost
     * @throws UnsupportedOperationException by default for a cost other than 1
     */
    default KeyUsage usage(LimitDefinition limit, String key, long cost) {
        if (cost != 1) {
            throw new UnsupportedOperationException(getClass().getSimpleName() + " tells usage for a cost of 1 only");
        }
        return usage(limit, key);
    }

    /**
     * Forgets what {@code key} has used in {@code limit}.
     * @param limit the limit's definition
     * @param key the counter key, not blank
     */
    void reset(LimitDefinition limit, String key);

    /**
     * Forgets every count of every limit: for tests that share an application between them. By
     * default unsupported.
     * @throws UnsupportedOperationException when the backend cannot
     */
    default void resetAll() {
        throw new UnsupportedOperationException(getClass().getName() + " cannot reset every count");
    }

    /**
     * Whether a decision may wait for I/O (a network round trip): reactive callers then decide on a
     * thread that may block, never on an event loop. True unless the backend says otherwise.
     * @return whether decisions may block the calling thread
     */
    default boolean mayBlock() {
        return true;
    }

    /**
     * Whether the decisions of one limit may block the calling thread: a backend that routes limits
     * to others answers for the one this limit goes to.
     * @param limit a limit's definition
     * @return whether its decisions may block; by default {@link #mayBlock()}
     */
    default boolean mayBlock(LimitDefinition limit) {
        return mayBlock();
    }

    /**
     * The most permits per window this backend counts exactly for a limit: a larger limit, from
     * configuration or set at run time, is refused before it is used.
     * <pre>{@code
     * if (newLimit > backend.largestLimit(definition)) { ... refuse the change ... }
     * }</pre>
     * @param limit the limit's definition
     * @return the largest limit it may have here; by default {@link Long#MAX_VALUE}
     */
    default long largestLimit(LimitDefinition limit) {
        return Long.MAX_VALUE;
    }

    /**
     * This backend and every backend it decides through (a router's backends, a decorator's
     * delegate, a remote backend's local fallback), each once: for what a backend tells of itself,
     * such as the local backend's counters in metrics.
     * <pre>{@code
     * backend.parts().stream().filter(LocalBackend.class::isInstance).map(LocalBackend.class::cast) ...
     * }</pre>
     * @return this backend first, then its parts'; by default this backend alone
     */
    default List<RateLimitBackend> parts() {
        return List.of(this);
    }

    /**
     * {@link #tryAcquireAll} without blocking the calling thread: for reactive callers. A backend
     * that never blocks decides at once; otherwise, unless it overrides this with a non-blocking
     * decision (Redis on Lettuce's asynchronous API), the decision runs on {@code blocking}.
     * @param requests distinct (limit, key) pairs, at least one
     * @param blocking runs work that may block
     * @return completes with the decisions, in the order of the requests
     */
    default CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        if (mayBlock()) {
            return CompletableFuture.supplyAsync(() -> tryAcquireAll(requests), blocking);
        }
        try {
            return CompletableFuture.completedFuture(tryAcquireAll(requests));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /**
     * Releases what the backend holds (its clock's thread, connections it opened itself); the
     * application context calls it when it closes. Nothing by default.
     */
    @Override
    default void close() {
    }

}
