package io.slidinglimiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.internal.SplitDecision;

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
        return decide(limit, limit.definition(), key, cost);
    }

    /**
     * Takes one permit of {@code limitName} for {@code key} if it is available, answering only
     * whether it was: {@link #tryAcquire(String, String)} for callers that need no more. On the local
     * backend it allocates nothing.
     * <pre>{@code
     * if (!rateLimiters.admit("search", userId)) {
     *     return ResponseEntity.status(429).build();
     * }
     * }</pre>
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @return whether the permit was taken
     * @throws IllegalArgumentException for an unknown limit or a blank key
     */
    public boolean admit(String limitName, String key) {
        return admit(this.registry.handle(limitName), key, 1);
    }

    /**
     * Takes {@code cost} permits of a limit resolved once with {@link #handle(String)}, answering
     * only whether they were taken.
     * @param limit the limit
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the limit
     * @return whether the permits were taken
     */
    public boolean admit(LimitRegistry.Handle limit, String key, long cost) {
        boolean allowed = this.backend.admit(limit.definition(), key, cost);
        record(limit, allowed);
        return allowed;
    }

    /**
     * Takes {@code cost} permits of a limit, on the quota of the caller's plan, building a
     * {@link Decision} only for a rejection: for callers that need the numbers only to refuse the
     * call (the annotation outside a web request). An admission allocates nothing on the local
     * backend.
     * @param limit the limit
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the plan's limit
     * @param plan the caller's plan, or null for the limit's own quota
     * @return null when the permits were taken; else the rejection
     */
    public Decision acquireOrReject(LimitRegistry.Handle limit, String key, long cost, String plan) {
        Decision rejection = this.backend.acquireOrReject(limit.definition(plan), key, cost);
        record(limit, rejection == null);
        return rejection;
    }

    /** Counts a decision: a shadow limit's rejection apart, as what it would have rejected. */
    private static void record(LimitRegistry.Handle limit, boolean allowed) {
        if (!allowed && limit.isShadow()) {
            limit.statistics().recordShadowRejected();
        }
        else {
            limit.statistics().record(allowed);
        }
    }

    /**
     * Takes {@code cost} permits of {@code limitName} for {@code key}, compared with the quota of the
     * caller's plan ({@code limiter.limits.<name>.plans.<plan>.limit}): the same counter whatever
     * the plan, so a caller who changes plan mid-window keeps its count.
     * <pre>{@code
     * Decision decision = rateLimiters.tryAcquire("api", customer.id(), 1, customer.plan());
     * }</pre>
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the plan's limit
     * @param plan the caller's plan; null, or a plan the limit does not have (logged once), for the
     * limit's own quota
     * @return the decision
     * @throws IllegalArgumentException for an unknown limit, a blank key or a cost outside 1..limit
     */
    public Decision tryAcquire(String limitName, String key, long cost, String plan) {
        return tryAcquire(this.registry.handle(limitName), key, cost, plan);
    }

    /**
     * {@link #tryAcquire(String, String, long, String)} for a limit resolved once with
     * {@link #handle(String)}.
     * @param limit the limit
     * @param key the counter key, not blank
     * @param cost the permits to take, between 1 and the plan's limit
     * @param plan the caller's plan, or null for the limit's own quota
     * @return the decision
     */
    public Decision tryAcquire(LimitRegistry.Handle limit, String key, long cost, String plan) {
        return decide(limit, limit.definition(plan), key, cost);
    }

    private Decision decide(LimitRegistry.Handle limit, LimitDefinition definition, String key, long cost) {
        Decision decision = this.backend.tryAcquire(definition, key, cost);
        record(limit, decision.allowed());
        return decision;
    }

    /**
     * Whether a limit is in shadow mode ({@code limiter.limits.<name>.shadow}): decided exactly as
     * when enforcing (a call it would reject consumes nothing from it), but the annotation, URL rules
     * and the gateway never reject for it, and no RateLimit header shows it. Its would-be rejections
     * are counted apart ({@code shadow-rejected}); this class still returns its true decisions.
     * @param limitName a limit's name
     * @return true when it never rejects
     */
    public boolean isShadow(String limitName) {
        return this.registry.isShadow(limitName);
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
        if (anyShadow(requests)) {
            return withShadows(requests, this.backend::tryAcquireAll);
        }
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

    private boolean anyShadow(List<LimitRequest> requests) {
        if (!this.registry.hasShadowLimits()) {
            return false;
        }
        for (LimitRequest request : requests) {
            if (this.registry.isShadow(request.limit().name())) {
                return true;
            }
        }
        return false;
    }

    private List<Integer> indices(List<LimitRequest> requests, boolean shadow) {
        List<Integer> indices = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            if (this.registry.isShadow(requests.get(i).limit().name()) == shadow) {
                indices.add(i);
            }
        }
        return indices;
    }

    /**
     * A call with limits in shadow mode: the enforcing limits decided all or nothing by
     * {@code enforce}; then, only if they admit the call (as all or nothing would), each shadow
     * limit on its own: what it would reject consumes nothing and is counted as such. The call is
     * allowed when the enforcing limits allow it; each shadow limit's own decision is its true one.
     * The decisions keep the order of the requests; the time and parts are the enforcing limits',
     * which a settle or refund concerns alone.
     */
    private Decisions withShadows(List<LimitRequest> requests, Function<List<LimitRequest>, Decisions> enforce) {
        List<Integer> enforcing = indices(requests, false);
        Decision[] decisions = new Decision[requests.size()];
        Decisions enforced = null;
        if (!enforcing.isEmpty()) {
            List<LimitRequest> selected = SplitDecision.select(requests, enforcing);
            enforced = enforce.apply(selected);
            recordStatistics(selected, enforced);
            for (int i = 0; i < enforcing.size(); i++) {
                decisions[enforcing.get(i)] = enforced.get(i);
            }
        }
        boolean allowed = enforced == null || enforced.allowed();
        for (int index : indices(requests, true)) {
            LimitRequest request = requests.get(index);
            long limit = request.limit().limit();
            decisions[index] = allowed ? decide(this.registry.handle(request.limit().name()), request.limit(),
                    request.key(), request.cost()) : new Decision(true, limit, limit, 0, 0);
        }
        return (enforced != null) ? new Decisions(allowed, List.of(decisions), enforced.decidedAtMillis(),
                enforced.generation(), enforced.parts())
                : new Decisions(true, List.of(decisions));
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
        if (anyShadow(requests)) {
            // A rollout aid, not the fast path: decided as tryAcquireAll, where it may wait.
            return this.backend.mayBlock() ? CompletableFuture.supplyAsync(() -> tryAcquireAll(requests), blocking)
                    : CompletableFuture.completedFuture(tryAcquireAll(requests));
        }
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
        if (anyShadow(requests)) {
            return withShadows(requests, this.backend::tryAcquireAll);
        }
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
        if (anyShadow(requests)) {
            // The admission was the enforcing limits' alone; shadow limits stay at their cost.
            List<Integer> enforcing = indices(requests, false);
            if (!enforcing.isEmpty()) {
                this.backend.settle(SplitDecision.select(requests, enforcing), taken,
                        SplitDecision.select(charges, enforcing));
            }
            return;
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
     * What {@code key} holds in a limit now, and what a call of {@code cost} would be told: its
     * {@code retryAfter} is when that many permits will be free (a token budget's reservation, say).
     * @param limitName a configured or annotated limit's name
     * @param key the counter key, not blank
     * @param cost the permits the call would ask, between 1 and the limit
     * @return the key's usage, decided for that cost
     */
    public KeyUsage usage(String limitName, String key, long cost) {
        return this.backend.usage(this.registry.get(limitName), key, cost);
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

    /**
     * The definition a call on {@code plan} is decided with: the limit's, with the plan's permits
     * per window; for {@link #tryAcquireAll} with plans.
     * @param limitName a configured or annotated limit's name
     * @param plan the caller's plan; null, or a plan the limit does not have, for the limit's own
     * @return the definition
     * @throws IllegalArgumentException for an unknown limit
     */
    public LimitDefinition definition(String limitName, String plan) {
        return this.registry.handle(limitName).definition(plan);
    }

}
