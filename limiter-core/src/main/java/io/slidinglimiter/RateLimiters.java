package io.slidinglimiter;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;

/**
 * Programmatic rate limiting against the application's named limits. A key given here and the
 * evaluated key of a {@code @RateLimited} limit of the same name address the same counter:
 * <pre>{@code
 * Decision decision = rateLimiters.tryAcquire("login", username);
 * if (!decision.allowed()) {
 *     throw new TooManyAttemptsException(decision.retryAfter());
 * }
 * }</pre>
 */
public class RateLimiters {

    private final LimitRegistry registry;

    private final RateLimitBackend backend;

    /**
     * Creates the facade.
     * @param registry the application's limits
     * @param backend where the counters live
     */
    public RateLimiters(LimitRegistry registry, RateLimitBackend backend) {
        this.registry = registry;
        this.backend = backend;
    }

    /**
     * Takes one permit of {@code limitName} for {@code key} if it is available.
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @return the decision
     * @throws IllegalArgumentException for an unknown limit or a blank key
     */
    public Decision tryAcquire(String limitName, String key) {
        return tryAcquire(limitName, key, 1);
    }

    /**
     * Takes {@code cost} permits of {@code limitName} for {@code key} if they are available.
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return the decision
     * @throws IllegalArgumentException for an unknown limit, a blank key or a cost outside 1..limit
     */
    public Decision tryAcquire(String limitName, String key, long cost) {
        return tryAcquire(this.registry.handle(limitName), key, cost);
    }

    /**
     * Takes {@code cost} permits of a limit resolved once with {@link #handle(String)}: the
     * cheapest call, for code that decides often against the same limit.
     * <pre>{@code
     * LimitRegistry.Handle search = rateLimiters.handle("search");
     * Decision decision = rateLimiters.tryAcquire(search, userId, 1);
     * }</pre>
     * @param limit the limit
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return the decision
     */
    public Decision tryAcquire(LimitRegistry.Handle limit, String key, long cost) {
        Decision decision = this.backend.tryAcquire(limit.definition(), key, cost);
        limit.statistics().record(decision.allowed());
        return decision;
    }

    /**
     * A limit, resolved once: its current definition (which run-time changes replace) and its
     * statistics.
     * @param limitName a configured or annotated limit's name
     * @return its handle
     * @throws IllegalArgumentException for an unknown limit
     */
    public LimitRegistry.Handle handle(String limitName) {
        return this.registry.handle(limitName);
    }

    /**
     * Takes the permits of every request only if all of them are available; otherwise none.
     * <pre>{@code
     * Decisions decisions = rateLimiters.tryAcquireAll(List.of(
     *         new LimitRequest(rateLimiters.definition("per-user"), userId, 1),
     *         new LimitRequest(rateLimiters.definition("global"), "all", 1)));
     * }</pre>
     * @param requests distinct (limit, key) pairs, at least one
     * @return the decisions, in the order of the requests
     */
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        Decisions decisions;
        if (requests.size() == 1) {
            LimitRequest request = requests.get(0);
            Decision decision = this.backend.tryAcquire(request.limit(), request.key(), request.cost());
            decisions = new Decisions(decision.allowed(), List.of(decision));
        }
        else {
            decisions = this.backend.tryAcquireAll(requests);
        }
        recordStatistics(requests, decisions);
        return decisions;
    }

    private void recordStatistics(List<LimitRequest> requests, Decisions decisions) {
        for (LimitRequest request : requests) {
            this.registry.statistics(request.limit().name()).record(decisions.allowed());
        }
    }

    /**
     * {@link #tryAcquireAll} without blocking the calling thread, for reactive callers: decided at
     * once in memory, on Lettuce's asynchronous API for Redis, or on {@code blocking} where a
     * decision can only wait.
     * @param requests distinct (limit, key) pairs, at least one
     * @param blocking runs work that may block
     * @return completes with the decisions, in the order of the requests
     */
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        return this.backend.tryAcquireAllAsync(requests, blocking).thenApply((decisions) -> {
            recordStatistics(requests, decisions);
            return decisions;
        });
    }

    /**
     * Admits a call whose permits are {@linkplain #settle settled} once it ran: {@link #tryAcquireAll},
     * keeping the time of the decision, which the settle needs, even for one limit.
     * @param requests distinct (limit, key) pairs, at least one, each with the cost to admit against
     * @return the decisions, in the order of the requests
     */
    public Decisions tryAcquireAllToSettle(List<LimitRequest> requests) {
        Decisions decisions = this.backend.tryAcquireAll(requests);
        recordStatistics(requests, decisions);
        return decisions;
    }

    /**
     * Settles an admitted call to what it finally charges, once it ran: permits it took beyond its
     * charge go back to the sub-window they came from; permits its charge asks beyond what it took
     * are counted now, whether or not they fit, so one charge may carry a key past its limit and
     * later calls wait until enough of it has left the window.
     * <pre>{@code
     * List<LimitRequest> asked = List.of(new LimitRequest(rateLimiters.definition("tokens"), customer, 500));
     * Decisions taken = rateLimiters.tryAcquireAllToSettle(asked);
     * if (taken.allowed()) {
     *     Completion completion = model.complete(prompt);
     *     rateLimiters.settle(asked, taken, new long[] { completion.usage().totalTokens() });
     * }
     * }</pre>
     * @param requests the requests as admitted
     * @param taken their decisions from {@link #tryAcquireAllToSettle}, allowed
     * @param charges what each request finally costs, zero or more, in the order of the requests
     * @throws IllegalArgumentException for a rejected decision, a negative charge, or charges that do
     * not match the requests
     */
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        if (!taken.allowed()) {
            throw new IllegalArgumentException("A rejected call took nothing and is never charged");
        }
        if (charges.length != requests.size()) {
            throw new IllegalArgumentException("One charge per request: " + requests.size() + " requests, "
                    + charges.length + " charges");
        }
        for (long charge : charges) {
            if (charge < 0) {
                throw new IllegalArgumentException("A charge is zero or more, not " + charge);
            }
        }
        this.backend.settle(requests, taken, charges);
    }

    /**
     * {@link #settle} without blocking the calling thread, for reactive callers: at once in memory,
     * on {@code blocking} where the backend waits for I/O.
     * @param requests the requests as admitted
     * @param taken their decisions, allowed
     * @param charges what each request finally costs
     * @param blocking runs work that may block
     * @return completes when settled, or with what the settle threw
     */
    public CompletionStage<Void> settleAsync(List<LimitRequest> requests, Decisions taken, long[] charges,
            Executor blocking) {
        if (this.backend.mayBlock()) {
            return CompletableFuture.runAsync(() -> settle(requests, taken, charges), blocking);
        }
        try {
            settle(requests, taken, charges);
            return CompletableFuture.completedFuture(null);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /**
     * What a call of cost 1 for {@code key} would be told now, without consuming anything.
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @return the decision such a call would get
     */
    public Decision peek(String limitName, String key) {
        return this.backend.peek(this.registry.get(limitName), key);
    }

    /**
     * What {@code key} holds in a limit now, without consuming anything: what a call of cost 1 would
     * be told, and the permits counted, which charges may carry past the limit.
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @return the key's usage
     */
    public KeyUsage usage(String limitName, String key) {
        return this.backend.usage(this.registry.get(limitName), key);
    }

    /**
     * Forgets what {@code key} has used in a limit, in this instance and, for Redis, everywhere.
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     */
    public void reset(String limitName, String key) {
        this.backend.reset(this.registry.get(limitName), key);
    }

    /**
     * Forgets every count of every limit, in this instance and, for Redis, every counter under the
     * key prefix: for tests that share one application (see {@code @ResetRateLimits} in
     * {@code limiter-spring-boot-test}). Not meant for a running service: every key starts afresh.
     * @throws UnsupportedOperationException when a custom backend cannot
     */
    public void resetAll() {
        this.backend.resetAll();
    }

    /**
     * The current definition of a limit.
     * @param limitName a configured or annotated limit's name
     * @return its definition
     * @throws IllegalArgumentException for an unknown limit
     */
    public LimitDefinition definition(String limitName) {
        return this.registry.get(limitName);
    }

}
