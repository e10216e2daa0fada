package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;

/**
 * The Redis backend as applications use it: never an exception for a Redis fault, never a wait
 * longer than the script runner's timeout, and no wait at all while Redis is known to be down.
 * <ul>
 * <li>A decision that Redis fails or answers too late follows the limit's {@link FailurePolicy}
 * (fail-open, fail-closed, or a local counter at the same limit), and is reported to
 * {@code onFallback}.</li>
 * <li>After {@code failureThreshold} failures in a row a circuit breaker stops calling Redis for
 * {@code openMillis}, then probes with a single call: decisions meanwhile follow the policy at
 * local speed, and Redis is used again as soon as a probe succeeds.</li>
 * <li>A key that Redis reported out of permits until {@code T} is rejected locally until {@code T},
 * at most {@value #DENIAL_CACHE_MILLIS} ms (the denial cache), which never admits what Redis would
 * reject.</li>
 * <li>Only Redis's own failures count: a call that timed out while Redis answered others, or whose
 * reply came soon after, was slow in this JVM ({@link RedisStatus#slowDecisions()}) and falls back
 * alone; a failure of one limit's own values or data ({@link LimitFaults}) falls back for that
 * limit's calls only, logged once, tripping no breaker.</li>
 * <li>Limits that lease ({@link Settings#leased()}) admit a busy key's calls from permits taken from
 * Redis in batches, exactly and never over the limit in any window; a live
 * lease keeps admitting what it holds while Redis fails.</li>
 * <li>What a {@code fail-open} or {@code local} fallback admitted is counted in Redis once Redis
 * answers again: Redis's count and every instance's later decisions include it.</li>
 * <li>An outage is logged when it starts, with its cause, summed up each minute while it lasts,
 * and logged when it ends; while Redis is out of reach a probe finds it again without traffic.
 * Fallbacks of slow calls while Redis was answering are logged apart, as this application's
 * overload.</li>
 * </ul>
 */
public final class ResilientRedisBackend implements RateLimitBackend {

    /** The longest a denial is answered locally: how long a reset or a new limit takes to reach every instance. */
    public static final long DENIAL_CACHE_MILLIS = 1_000;

    private final RedisBackend redis;

    private final RateLimitBackend local;

    private final TimeSource timeSource;

    private final ShardBreakers breakers;

    /** Denials Redis gave, answered here until they end; null when the cache is off. */
    private final DenialCache denials;

    private final FailurePolicies policies;

    private final RedisOutage outage;

    /** This instance's leases, when a limit leases; null otherwise. */
    private final Leases leases;

    /** What each call's outcome tells of Redis: for the breakers, the outage, slow calls and reports. */
    private final CallOutcomes outcomes;

    private final RedisStatus status;

    /** Failures of one limit's own values or data, which are not Redis's. */
    private final LimitFaults limitFaults = new LimitFaults();

    /** Decides a call's several limits. */
    private final SeveralLimits acrossLimits;

    /**
     * Creates the backend.
     * @param redis the Redis backend
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without Redis
     */
    public ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback) {
        this(redis, local, settings, timeSource, onFallback, null);
    }

    /**
     * Creates the backend with a probe that finds Redis again after an outage without waiting for a
     * decision to try.
     * @param redis the Redis backend
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without Redis
     * @param probe a read that answers whether Redis is reachable again, run twice a second while it
     * is not; null for none
     */
    public ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback, BooleanSupplier probe) {
        this(redis, local, settings, timeSource, onFallback, probe, true);
    }

    /**
     * @param sweepLeases whether a daemon thread gives back leases that ended without traffic; tests
     * that replay a schedule call {@link #sweepLeases()} instead
     */
    ResilientRedisBackend(RedisBackend redis, RateLimitBackend local, Settings settings, TimeSource timeSource,
            Consumer<LimitDefinition> onFallback, BooleanSupplier probe, boolean sweepLeases) {
        this.redis = redis;
        this.local = local;
        this.timeSource = timeSource;
        this.breakers = new ShardBreakers(settings.failureThreshold(), settings.openMillis(), redis::shards);
        this.denials = (settings.denialCacheSize() > 0)
                ? new DenialCache(settings.denialCacheSize(), DENIAL_CACHE_MILLIS) : null;
        // The most keys this instance keeps state for, also with the denial cache off.
        int maxKeys = (settings.denialCacheSize() > 0) ? settings.denialCacheSize() : 100_000;
        UnreportedAdmissions unreported = new UnreportedAdmissions(maxKeys);
        this.outcomes = new CallOutcomes(this.breakers, timeSource, probe, redis.reporter(), unreported,
                this::breakerOf);
        this.outage = this.outcomes.outage();
        this.policies = new FailurePolicies(settings.defaultPolicy(), settings.policies(), settings.denialCacheSize(),
                local, unreported, onFallback, this.outage, timeSource);
        this.leases = (settings.leased() != null) ? new Leases(redis, timeSource, settings.leased(), maxKeys,
                sweepLeases) : null;
        this.acrossLimits = new SeveralLimits(redis, this.breakers, this.outcomes, this.policies, this.limitFaults,
                timeSource, this::breakerOf);
        this.status = new RedisStatus(this.outage, this.breakers, this.policies, this.outcomes.slowCalls(), this.leases,
                redis::isScriptLoaded);
    }

    /**
     * How the backend behaves when Redis fails.
     *
     * @param defaultPolicy the policy of limits without their own
     * @param policies the policy of each limit that has its own, by name
     * @param failureThreshold failures in a row that open the circuit breaker
     * @param openMillis how long the breaker stays open before a probe
     * @param denialCacheSize the most denials kept locally; 0 turns the cache off (also the most keys
     * holding a lease at once)
     * @param leased the names of the limits that take leases (those of the sliding window counter
     * do); null when none does
     */
    public record Settings(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int failureThreshold,
            long openMillis, int denialCacheSize, Predicate<String> leased) {

        /**
         * Settings without leases.
         * @param defaultPolicy the policy of limits without their own
         * @param policies the policy of each limit that has its own, by name
         * @param failureThreshold failures in a row that open the circuit breaker
         * @param openMillis how long the breaker stays open before a probe
         * @param denialCacheSize the most denials kept locally; 0 turns the cache off
         */
        public Settings(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int failureThreshold,
                long openMillis, int denialCacheSize) {
            this(defaultPolicy, policies, failureThreshold, openMillis, denialCacheSize, null);
        }

    }

    /**
     * What this backend can tell of itself, for health and the endpoint.
     * @return its status, which only reads
     */
    public RedisStatus status() {
        return this.status;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        return tryAcquireAll(List.of(new LimitRequest(limit, key, cost))).get(0);
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.size() != 1) {
            return this.acrossLimits.decide(requests);
        }
        Decisions here = answeredHere(requests.get(0));
        return (here != null) ? here : decideWithRedis(requests, null).toCompletableFuture().join();
    }

    /**
     * {@inheritDoc}
     * <p>
     * One limit is decided on Redis's asynchronous path, by the same steps as {@link #tryAcquire};
     * several limits are decided by {@link #tryAcquireAll} on {@code blocking}.
     */
    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        if (requests.size() != 1) {
            return RateLimitBackend.super.tryAcquireAllAsync(requests, blocking);
        }
        Decisions here = answeredHere(requests.get(0));
        return (here != null) ? CompletableFuture.completedFuture(here) : decideWithRedis(requests, blocking);
    }

    /** One limit without a round trip: from the key's lease, or by a denial Redis gave; null otherwise. */
    private Decisions answeredHere(LimitRequest request) {
        if (leases(request.limit())) {
            Decisions fromLease = this.leases.admit(request.limit(), request.key(), request.cost());
            if (fromLease != null) {
                return fromLease;
            }
        }
        Decision denied = cachedDenial(request.limit(), request.key());
        return (denied != null) ? single(denied, 0) : null;
    }

    /**
     * One limit that needs Redis: the failure policy while the shard's breaker keeps calls away;
     * else the key's next lease (or the one another thread is taking), or Redis's decision. On this
     * thread when {@code blocking} is null (the stage returned is then complete), else without
     * blocking one. Keeps the time Redis decided at, which a settle needs; zero when Redis did not.
     */
    private CompletionStage<Decisions> decideWithRedis(List<LimitRequest> requests, Executor blocking) {
        LimitRequest request = requests.get(0);
        LimitDefinition limit = request.limit();
        String key = request.key();
        long cost = request.cost();
        RedisBackend.Route route = this.redis.route(requests);
        CircuitBreaker breaker = this.breakers.of(route.shard());
        long sentAtMillis = this.timeSource.currentTimeMillis();
        if (!breaker.allowsCall(sentAtMillis)) {
            return CompletableFuture.completedFuture(single(this.policies.decide(limit, key, cost, breaker), 0));
        }
        boolean leased = leases(limit);
        CompletionStage<LeaseStep> step = leased
                ? this.leases.next(limit, key, cost, sentAtMillis, route, blocking) : null;
        if (step == null) {
            return decideInRedis(requests, route, breaker, leased, blocking);
        }
        return step.thenCompose((taken) -> {
            if (taken instanceof LeaseStep.Granted granted) {
                return CompletableFuture.completedFuture(single(recordDecision(granted.decision(), limit, key, cost,
                        sentAtMillis, breaker), granted.decidedAtMillis()));
            }
            if (taken instanceof LeaseStep.NotGranted notGranted) {
                return CompletableFuture.completedFuture(single(failedOver(notGranted.failure(), limit, key, cost,
                        breaker), 0));
            }
            Decisions admitted = ((LeaseStep.Waited) taken).admitted();
            Decision denied = (admitted == null) ? cachedDenial(limit, key) : null;
            if (admitted != null || denied != null) {
                return CompletableFuture.completedFuture((admitted != null) ? admitted : single(denied, 0));
            }
            return decideInRedis(requests, route, breaker, true, blocking);
        });
    }

    /** Whether a limit takes leases on this instance. */
    private boolean leases(LimitDefinition limit) {
        return this.leases != null && this.leases.covers(limit);
    }

    /**
     * One limit decided by Redis as without leases (counted so for a limit that leases): on this
     * thread when {@code blocking} is null.
     */
    private CompletionStage<Decisions> decideInRedis(List<LimitRequest> requests, RedisBackend.Route route,
            CircuitBreaker breaker, boolean leased, Executor blocking) {
        LimitRequest request = requests.get(0);
        if (leased) {
            this.leases.countInRedis(request.limit());
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        if (blocking != null) {
            return this.redis.decideAsync(requests, route, blocking)
                    .handle((decisions, failure) -> decided(request, decisions, failure, sentAtMillis, breaker));
        }
        Decisions decisions;
        try {
            decisions = this.redis.decide(requests, route);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.completedFuture(decided(request, null, ex, sentAtMillis, breaker));
        }
        return CompletableFuture.completedFuture(decided(request, decisions, null, sentAtMillis, breaker));
    }

    /** What Redis's answer, or its failure, makes of one limit's call. */
    private Decisions decided(LimitRequest request, Decisions decisions, Throwable failure, long sentAtMillis,
            CircuitBreaker breaker) {
        if (failure != null) {
            return single(failedOver(RedisBackendException.of(failure), request.limit(), request.key(),
                    request.cost(), breaker), 0);
        }
        return single(recordDecision(decisions.get(0), request.limit(), request.key(), request.cost(), sentAtMillis,
                breaker), decisions.decidedAtMillis());
    }

    private static Decisions single(Decision decision, long decidedAtMillis) {
        return new Decisions(decision.allowed(), List.of(decision), decidedAtMillis);
    }

    /** The denial cached for a key while Redis said it is out of permits, or null. */
    private Decision cachedDenial(LimitDefinition limit, String key) {
        return (this.denials != null) ? this.denials.get(limit, key, this.timeSource.currentTimeMillis()) : null;
    }

    /** Redis decided: the breaker closes, and the decision is remembered for the policy and the cache. */
    private Decision recordDecision(Decision decision, LimitDefinition limit, String key, long cost,
            long sentAtMillis, CircuitBreaker breaker) {
        this.outcomes.recordSuccess(breaker);
        this.policies.remember(limit, key, decision, sentAtMillis);
        if (this.denials != null && !decision.allowed() && cost == 1) {
            // Kept at most DENIAL_CACHE_MILLIS: a reset or a new limit on another instance reaches this one by then.
            this.denials.put(limit, key, decision, sentAtMillis, this.timeSource.currentTimeMillis());
        }
        return decision;
    }

    /** Redis did not decide: the failure counts against the shard, and the policy decides. */
    private Decision failedOver(RuntimeException ex, LimitDefinition limit, String key, long cost,
            CircuitBreaker breaker) {
        if (LimitFaults.isLimitsOwn(ex)) {
            this.limitFaults.record(limit.name(), ex);
        }
        this.outcomes.recordFailure(ex, breaker);
        return this.policies.decide(limit, key, cost, breaker);
    }

    private CircuitBreaker breakerOf(LimitDefinition limit, String key) {
        return this.breakers.of(this.redis.route(limit, key).shard());
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        try {
            this.redis.refund(requests, taken);
        }
        catch (RuntimeException ex) {
            // The permits expire with their window; the over-count cannot outlive it.
            this.outcomes.recordFailure(ex, breakerOf(requests.get(0).limit(), requests.get(0).key()));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * A key given permits back forgets its cached denial here at once. A settle that cannot reach
     * Redis is recorded against the breaker and thrown. A call that the failure policy admitted is
     * settled in what Redis will be told of it once it answers.
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        if (taken.decidedAtMillis() == 0) {
            // Admitted by the failure policy, not by Redis: what Redis will be told changes instead.
            this.policies.settle(requests, charges);
            return;
        }
        if (this.denials != null) {
            for (int i = 0; i < requests.size(); i++) {
                if (charges[i] < requests.get(i).cost()) {
                    this.denials.remove(requests.get(i).limit().name(), requests.get(i).key());
                }
            }
        }
        try {
            this.redis.settle(requests, taken, charges);
        }
        catch (RuntimeException ex) {
            this.outcomes.recordFailure(ex, breakerOf(requests.get(0).limit(), requests.get(0).key()));
            throw ex;
        }
    }

    /** Itself, the Redis backend, and the local backend its {@code local} policy decides with. */
    @Override
    public List<RateLimitBackend> parts() {
        List<RateLimitBackend> parts = new ArrayList<>();
        parts.add(this);
        parts.addAll(this.redis.parts());
        parts.addAll(this.local.parts());
        return List.copyOf(parts);
    }

    /** Redis's Lua counts in doubles: {@value RedisBackend#MAX_LIMIT} (2^53 - 1) at the most. */
    @Override
    public long largestLimit(LimitDefinition limit) {
        return this.redis.largestLimit(limit);
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return usage(limit, key).decision();
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        return usage(limit, key, 1);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        try {
            return this.redis.usage(limit, key, cost);
        }
        catch (RuntimeException ex) {
            this.outcomes.recordFailure(ex, breakerOf(limit, key));
            return this.local.usage(limit, key, cost);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Redis's counters, this instance's fallback counts and its cached denials. Throws when Redis
     * fails: a reset that did not happen must not look as if it had.
     */
    @Override
    public void resetAll() {
        if (this.denials != null) {
            this.denials.clear();
        }
        if (this.leases != null) {
            this.leases.forgetAll();
        }
        this.local.resetAll();
        this.redis.resetAll();
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        if (this.denials != null) {
            this.denials.remove(limit.name(), key);
        }
        this.policies.forget(limit.name(), key);
        if (this.leases != null) {
            this.leases.forget(limit.name(), key);
        }
        this.local.reset(limit, key);
        this.redis.reset(limit, key);
    }

    @Override
    public void close() {
        if (this.leases != null) {
            this.leases.close();
        }
        this.outage.close();
        this.local.close();
        this.redis.close();
    }

    /**
     * The server behind the connection changed (Sentinel promoted a replica): the old one's failures
     * say nothing of the new one, so the breaker closes and the next decision tries it.
     */
    public void serverChanged() {
        this.breakers.closeAll();
    }

    /**
     * Gives back what every lease holds and takes no more, waiting for Redis at most a second: for an
     * application that stops, once it takes no more requests and before its Redis connections close.
     * Decisions go on without leases.
     */
    public void endLeases() {
        if (this.leases != null) {
            this.leases.close();
        }
    }

    /** Gives back the leases that ended without traffic now: for tests that replay a schedule. */
    void sweepLeases() {
        if (this.leases != null) {
            this.leases.sweep();
        }
    }

}
