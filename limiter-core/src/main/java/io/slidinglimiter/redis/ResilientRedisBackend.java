package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.lettuce.core.RedisCommandExecutionException;

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
 * reply came soon after, was slow in this JVM ({@link #slowDecisions()}) and falls back alone.</li>
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

    private final RateLimitBackend redis;

    private final RateLimitBackend local;

    private final FailurePolicy defaultPolicy;

    private final Map<String, FailurePolicy> policies;

    private final TimeSource timeSource;

    /** One breaker per shard (Cluster node; one in all elsewhere): a sick shard never stops the others. */
    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();

    private final int failureThreshold;

    private final long openMillis;

    /** The shard of a key: {@link RedisBackend#shardOf}, or one shard for another backend. */
    private final BiFunction<LimitDefinition, String, String> shardOf;

    /** The shards that serve keys now: a node that was replaced leaves its breaker behind. */
    private final Supplier<Set<String>> liveShards;

    private final DenialCache denials;

    /** For local-policy limits: what Redis last said each key used, to start the local counter from. */
    private final LastKnownUsage lastKnown;

    private final Consumer<LimitDefinition> onFallback;

    private final RedisOutage outage;

    private final LongAdder fallbacks = new LongAdder();

    private final LongAdder slowDecisions = new LongAdder();

    /** The Redis backend that takes leases, when Redis is one; null otherwise. */
    private final RedisBackend leasing;

    /** This instance's leases, when a limit leases; null otherwise. */
    private final Leases leases;

    /** What fallbacks admitted, until Redis counts it. */
    private final UnreportedAdmissions unreported;

    /** Counts a fallback's admissions in Redis; null when the backend is not Redis's. */
    private final UnreportedAdmissions.Reporter reporter;

    /**
     * Creates the backend.
     * @param redis the Redis backend
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without Redis
     */
    public ResilientRedisBackend(RateLimitBackend redis, RateLimitBackend local, Settings settings,
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
    public ResilientRedisBackend(RateLimitBackend redis, RateLimitBackend local, Settings settings,
            TimeSource timeSource, Consumer<LimitDefinition> onFallback, BooleanSupplier probe) {
        this(redis, local, settings, timeSource, onFallback, probe, true);
    }

    /**
     * @param sweepLeases whether a daemon thread gives back leases that ended without traffic; tests
     * that replay a schedule call {@link #sweepLeases()} instead
     */
    ResilientRedisBackend(RateLimitBackend redis, RateLimitBackend local, Settings settings, TimeSource timeSource,
            Consumer<LimitDefinition> onFallback, BooleanSupplier probe, boolean sweepLeases) {
        this.redis = redis;
        this.local = local;
        this.defaultPolicy = settings.defaultPolicy();
        this.policies = Map.copyOf(settings.policies());
        this.timeSource = timeSource;
        this.failureThreshold = settings.failureThreshold();
        this.openMillis = settings.openMillis();
        this.shardOf = (redis instanceof RedisBackend backend) ? backend::shardOf : (limit, key) -> "";
        this.liveShards = (redis instanceof RedisBackend backend) ? backend::shards : () -> Set.of("");
        this.outage = new RedisOutage(timeSource, probe, this::redisAnswersAgain);
        this.denials = (settings.denialCacheSize() > 0)
                ? new DenialCache(settings.denialCacheSize(), DENIAL_CACHE_MILLIS) : null;
        boolean anyLocal = settings.defaultPolicy() == FailurePolicy.LOCAL
                || settings.policies().containsValue(FailurePolicy.LOCAL);
        this.lastKnown = (anyLocal && settings.denialCacheSize() > 0) ? new LastKnownUsage(settings.denialCacheSize())
                : null;
        this.onFallback = onFallback;
        this.leasing = (redis instanceof RedisBackend backend && settings.leased() != null) ? backend : null;
        // The most keys this instance keeps state for, also with the denial cache off.
        int maxKeys = (settings.denialCacheSize() > 0) ? settings.denialCacheSize() : 100_000;
        this.leases = (this.leasing != null) ? new Leases(this.leasing, timeSource, settings.leased(), maxKeys,
                sweepLeases) : null;
        this.unreported = new UnreportedAdmissions(maxKeys);
        this.reporter = (redis instanceof RedisBackend backend) ? backend::countLater : null;
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
     * A key's lease on this instance.
     *
     * @param held whether it holds one that can admit now
     * @param left its permits not yet admitted
     * @param taken the permits it took from Redis, the taking call's cost included
     * @param endsInMillis how long it may still admit
     */
    public record LeaseState(boolean held, long left, long taken, long endsInMillis) {

        /** No lease held. */
        public static final LeaseState NONE = new LeaseState(false, 0, 0, 0);

    }

    /**
     * A limit's decisions with leases, since start.
     *
     * @param fromLease calls admitted from a lease, without a round trip
     * @param fromRedis calls decided by Redis (the ones that took a lease among them)
     * @param leasesTaken leases taken with permits to spare
     * @param givenBack permits given back unused
     * @param lost permits that could not be given back (Redis did not answer): counted until their
     * sub-window leaves the window
     */
    public record LeaseCounts(long fromLease, long fromRedis, long leasesTaken, long givenBack, long lost) {

        /** A limit that never leased. */
        public static final LeaseCounts NONE = new LeaseCounts(0, 0, 0, 0, 0);

    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        return tryAcquireOne(List.of(new LimitRequest(limit, key, cost))).get(0);
    }

    /**
     * One limit: a denial cached for the key, else Redis while the shard's breaker lets calls
     * through, else the failure policy; keeping the time Redis decided at (which a settle needs),
     * zero for a decision Redis did not take.
     */
    private Decisions tryAcquireOne(List<LimitRequest> requests) {
        LimitRequest request = requests.get(0);
        LimitDefinition limit = request.limit();
        String key = request.key();
        long cost = request.cost();
        boolean leased = this.leases != null && this.leases.covers(limit);
        if (leased) {
            Decisions fromLease = this.leases.admit(limit, key, cost);
            if (fromLease != null) {
                return fromLease;
            }
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        Decision denied = cachedDenial(limit, key, sentAtMillis);
        if (denied != null) {
            return single(denied, 0);
        }
        CircuitBreaker breaker = breakerOf(limit, key);
        if (!breaker.allowsCall(sentAtMillis)) {
            return single(fallback(limit, key, cost, breaker), 0);
        }
        Leases.Holder holder = leased ? this.leases.claim(limit, key) : null;
        if (holder != null) {
            RedisBackend.Lease grant;
            try {
                grant = this.leasing.lease(limit, key, cost, this.leases.wanted(holder, limit, cost));
            }
            catch (RuntimeException ex) {
                this.leases.notTaken(holder);
                return single(failedOver(ex, limit, key, cost, breaker), 0);
            }
            Decision decision = this.leases.taken(holder, limit, key, grant, cost, sentAtMillis);
            return single(decided(decision, limit, key, cost, sentAtMillis, breaker), grant.decidedAtMillis());
        }
        if (leased) {
            // Another thread is taking the key's next lease: its answer serves this call too, without
            // a round trip of its own.
            CompletableFuture<Void> taking = this.leases.taking(limit, key);
            if (taking != null) {
                awaitTaking(taking);
                Decisions afterTaking = afterTaking(limit, key, cost);
                if (afterTaking != null) {
                    return afterTaking;
                }
            }
            this.leases.decidedInRedis(limit);
        }
        Decisions decisions;
        try {
            decisions = this.redis.tryAcquireAll(requests);
        }
        catch (RuntimeException ex) {
            return single(failedOver(ex, limit, key, cost, breaker), 0);
        }
        return single(decided(decisions.get(0), limit, key, cost, sentAtMillis, breaker), decisions.decidedAtMillis());
    }

    /**
     * {@inheritDoc}
     * <p>
     * One limit is decided on Redis's asynchronous path, with the same denial cache, breaker,
     * failure policy and last known usage as {@link #tryAcquire}; several limits are decided by
     * {@link #tryAcquireAll} on {@code blocking}.
     */
    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        if (requests.size() != 1) {
            return RateLimitBackend.super.tryAcquireAllAsync(requests, blocking);
        }
        LimitRequest request = requests.get(0);
        LimitDefinition limit = request.limit();
        String key = request.key();
        long cost = request.cost();
        boolean leased = this.leases != null && this.leases.covers(limit);
        if (leased) {
            Decisions fromLease = this.leases.admit(limit, key, cost);
            if (fromLease != null) {
                return CompletableFuture.completedFuture(fromLease);
            }
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        Decision denied = cachedDenial(limit, key, sentAtMillis);
        if (denied != null) {
            return CompletableFuture.completedFuture(single(denied, 0));
        }
        CircuitBreaker breaker = breakerOf(limit, key);
        if (!breaker.allowsCall(sentAtMillis)) {
            return CompletableFuture.completedFuture(single(fallback(limit, key, cost, breaker), 0));
        }
        Leases.Holder holder = leased ? this.leases.claim(limit, key) : null;
        if (holder != null) {
            CompletionStage<RedisBackend.Lease> grant;
            try {
                grant = this.leasing.leaseAsync(limit, key, cost, this.leases.wanted(holder, limit, cost), blocking);
            }
            catch (RuntimeException ex) {
                grant = CompletableFuture.failedFuture(ex);
            }
            return grant.handle((taken, failure) -> {
                if (failure != null) {
                    this.leases.notTaken(holder);
                    return single(failedOver(RedisBackendException.of(failure), limit, key, cost, breaker), 0);
                }
                Decision decision = this.leases.taken(holder, limit, key, taken, cost, sentAtMillis);
                return single(decided(decision, limit, key, cost, sentAtMillis, breaker), taken.decidedAtMillis());
            });
        }
        if (leased) {
            CompletableFuture<Void> taking = this.leases.taking(limit, key);
            if (taking != null) {
                return taking.handle((ignored, failure) -> afterTaking(limit, key, cost))
                        .thenCompose((afterTaking) -> (afterTaking != null)
                                ? CompletableFuture.completedFuture(afterTaking)
                                : decideInRedisAsync(requests, blocking, limit, key, cost, breaker));
            }
        }
        return decideInRedisAsync(requests, blocking, limit, key, cost, breaker);
    }

    /** One limit on Redis's asynchronous path, as without leases. */
    private CompletionStage<Decisions> decideInRedisAsync(List<LimitRequest> requests, Executor blocking,
            LimitDefinition limit, String key, long cost, CircuitBreaker breaker) {
        if (this.leases != null && this.leases.covers(limit)) {
            this.leases.decidedInRedis(limit);
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        return this.redis.tryAcquireAllAsync(requests, blocking).handle((decisions, failure) -> (failure == null)
                ? single(decided(decisions.get(0), limit, key, cost, sentAtMillis, breaker), decisions.decidedAtMillis())
                : single(failedOver(RedisBackendException.of(failure), limit, key, cost, breaker), 0));
    }

    /** Waits for another thread's lease, which its runner's timeout bounds. */
    private static void awaitTaking(CompletableFuture<Void> taking) {
        try {
            taking.get(DENIAL_CACHE_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException ex) {
            // Decided in Redis, as without leases.
        }
    }

    /** A call that waited for another thread's lease: admitted from it, or denied by what Redis said, or null. */
    private Decisions afterTaking(LimitDefinition limit, String key, long cost) {
        Decisions fromLease = this.leases.admit(limit, key, cost);
        if (fromLease != null) {
            return fromLease;
        }
        Decision denied = cachedDenial(limit, key, this.timeSource.currentTimeMillis());
        return (denied != null) ? single(denied, 0) : null;
    }

    private static Decisions single(Decision decision, long decidedAtMillis) {
        return new Decisions(decision.allowed(), List.of(decision), decidedAtMillis);
    }

    /** The denial cached for a key while Redis said it is out of permits, or null. */
    private Decision cachedDenial(LimitDefinition limit, String key, long nowMillis) {
        return (this.denials != null) ? this.denials.get(limit, key, nowMillis) : null;
    }

    /** Redis decided: the breaker closes, and the decision is remembered for the policy and the cache. */
    private Decision decided(Decision decision, LimitDefinition limit, String key, long cost, long sentAtMillis,
            CircuitBreaker breaker) {
        succeeded(breaker);
        if (this.lastKnown != null && policyOf(limit) == FailurePolicy.LOCAL) {
            this.lastKnown.record(limit, key, decision, sentAtMillis);
        }
        if (this.denials != null && !decision.allowed() && cost == 1) {
            // Kept at most DENIAL_CACHE_MILLIS: a reset or a new limit on another instance reaches this one by then.
            this.denials.put(limit, key, decision, sentAtMillis, this.timeSource.currentTimeMillis());
        }
        return decision;
    }

    /** Redis did not decide: the failure counts against the shard, and the policy decides. */
    private Decision failedOver(RuntimeException ex, LimitDefinition limit, String key, long cost,
            CircuitBreaker breaker) {
        failed(ex, breaker);
        return fallback(limit, key, cost, breaker);
    }


    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.size() == 1) {
            return tryAcquireOne(requests);
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        // A call across shards goes to Redis only while every shard's breaker lets it.
        List<CircuitBreaker> breakers = breakersOf(requests);
        CircuitBreaker breaker = breakers.get(0);
        if (allowCall(breakers, sentAtMillis)) {
            try {
                Decisions decisions = this.redis.tryAcquireAll(requests);
                breakers.forEach(this::succeeded);
                if (this.lastKnown != null) {
                    for (int i = 0; i < requests.size(); i++) {
                        LimitRequest request = requests.get(i);
                        if (policyOf(request.limit()) == FailurePolicy.LOCAL) {
                            this.lastKnown.record(request.limit(), request.key(), decisions.get(i), sentAtMillis);
                        }
                    }
                }
                return decisions;
            }
            catch (RedisShardException ex) {
                // Only the failing shard's breaker counts it.
                CircuitBreaker failing = this.breakers.getOrDefault(ex.shard(), breaker);
                failed(ex.failure(), failing);
                breaker = failing;
            }
            catch (RuntimeException ex) {
                breakers.forEach((each) -> failed(ex, each));
            }
        }
        else {
            breaker = breakers.stream().filter(CircuitBreaker::isOpen).findFirst().orElse(breaker);
        }
        return fallback(requests, breaker);
    }

    /** The breakers of the shards a call's requests go to, each once. */
    private List<CircuitBreaker> breakersOf(List<LimitRequest> requests) {
        List<CircuitBreaker> breakers = new ArrayList<>(1);
        for (LimitRequest request : requests) {
            CircuitBreaker breaker = breakerOf(request.limit(), request.key());
            if (!breakers.contains(breaker)) {
                breakers.add(breaker);
            }
        }
        return breakers;
    }

    /** Whether every breaker lets a call through; a probe one of them granted is handed back if not. */
    private static boolean allowCall(List<CircuitBreaker> breakers, long nowMillis) {
        for (int i = 0; i < breakers.size(); i++) {
            if (!breakers.get(i).allowsCall(nowMillis)) {
                for (int granted = 0; granted < i; granted++) {
                    breakers.get(granted).returnProbe();
                }
                return false;
            }
        }
        return true;
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        try {
            this.redis.refund(requests, taken);
        }
        catch (RuntimeException ex) {
            // The permits expire with their window; the over-count cannot outlive it.
            failed(ex, breakerOf(requests.get(0).limit(), requests.get(0).key()));
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
            long now = this.timeSource.currentTimeMillis();
            for (int i = 0; i < requests.size(); i++) {
                LimitRequest request = requests.get(i);
                if (admitsOnFailure(request.limit())) {
                    this.unreported.add(request.limit(), request.key(), charges[i] - request.cost(), now);
                }
            }
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
            failed(ex, breakerOf(requests.get(0).limit(), requests.get(0).key()));
            throw ex;
        }
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return usage(limit, key).decision();
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        try {
            return this.redis.usage(limit, key);
        }
        catch (RuntimeException ex) {
            failed(ex, breakerOf(limit, key));
            return this.local.usage(limit, key);
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
        if (this.lastKnown != null) {
            this.lastKnown.remove(limit.name(), key);
        }
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
     * Whether Redis is failing decisions now: from the first failure until decisions succeed again
     * with none failing for a second. A slow call while Redis answers others is not a failure.
     * @return whether an outage is going on
     */
    public boolean isFailing() {
        return this.outage.isFailing();
    }

    /** @return the message of the last failure, or empty */
    public String lastFailure() {
        return this.outage.cause();
    }

    /** @return decisions that waited longer than the timeout while Redis answered other commands */
    public long slowDecisions() {
        return this.slowDecisions.sum();
    }

    /**
     * The policy a limit follows while Redis fails.
     * @param limitName the limit's name
     * @return its own policy, or the default
     */
    public FailurePolicy policyOf(String limitName) {
        return this.policies.getOrDefault(limitName, this.defaultPolicy);
    }

    /**
     * The server behind the connection changed (Sentinel promoted a replica): the old one's failures
     * say nothing of the new one, so the breaker closes and the next decision tries it.
     */
    public void serverChanged() {
        closeBreakers();
    }

    /** @return whether a circuit breaker keeps calls away from Redis, or from a shard of it */
    public boolean isCircuitOpen() {
        return !openShards().isEmpty();
    }

    /**
     * The shards whose breaker keeps calls away now: on Cluster the ids of the failing nodes that
     * still serve slots, {@code ""} for a standalone or Sentinel Redis. The breakers of nodes that
     * serve no slot any more (a master whose replica was promoted) are dropped.
     * @return the failing shards, sorted
     */
    public List<String> openShards() {
        List<String> open = new ArrayList<>();
        for (Map.Entry<String, CircuitBreaker> breaker : this.breakers.entrySet()) {
            if (breaker.getValue().isOpen()) {
                open.add(breaker.getKey());
            }
        }
        if (open.isEmpty() || this.breakers.size() == 1) {
            return open;
        }
        Set<String> live = this.liveShards.get();
        for (String shard : List.copyOf(open)) {
            if (!live.contains(shard)) {
                this.breakers.remove(shard);
                open.remove(shard);
            }
        }
        open.sort(null);
        return open;
    }

    /**
     * A key's lease on this instance, for the endpoint.
     * @param limitName the limit's name
     * @param key the counter key
     * @return its state; not held when none is, or the limit does not lease
     */
    public LeaseState leaseState(String limitName, String key) {
        return (this.leases != null) ? this.leases.state(limitName, key) : LeaseState.NONE;
    }

    /**
     * A limit's decisions with leases since start.
     * @param limitName the limit's name
     * @return its counts; zeros when it does not lease
     */
    public LeaseCounts leaseCounts(String limitName) {
        return (this.leases != null) ? this.leases.counts(limitName) : LeaseCounts.NONE;
    }

    /**
     * Whether a limit takes leases here.
     * @param limit its definition in force
     * @return whether it does
     */
    public boolean leases(LimitDefinition limit) {
        return this.leases != null && this.leases.covers(limit);
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

    /** @return decisions taken without Redis since start */
    public long fallbackDecisions() {
        return this.fallbacks.sum();
    }

    /** @return the policy of a limit */
    FailurePolicy policyOf(LimitDefinition limit) {
        return policyOf(limit.name());
    }

    private CircuitBreaker breakerOf(LimitDefinition limit, String key) {
        String shard = this.shardOf.apply(limit, key);
        CircuitBreaker breaker = this.breakers.get(shard);
        return (breaker != null) ? breaker : this.breakers.computeIfAbsent(shard,
                (ignored) -> new CircuitBreaker(this.failureThreshold, this.openMillis));
    }

    private void closeBreakers() {
        this.breakers.values().forEach(CircuitBreaker::recordSuccess);
    }

    private Decision fallback(LimitDefinition limit, String key, long cost, CircuitBreaker breaker) {
        this.fallbacks.increment();
        this.outage.fellBack();
        this.onFallback.accept(limit);
        Decision decision = switch (policyOf(limit)) {
            case FAIL_OPEN -> new Decision(true, limit.limit(), limit.limit() - cost, 0, 0);
            case FAIL_CLOSED -> rejection(limit, breaker);
            case LOCAL -> {
                if (this.lastKnown != null) {
                    this.lastKnown.seed(this.local, limit, key, this.timeSource.currentTimeMillis());
                }
                yield this.local.tryAcquire(limit, key, cost);
            }
        };
        if (decision.allowed()) {
            this.unreported.add(limit, key, cost, this.timeSource.currentTimeMillis());
        }
        return decision;
    }

    /** Whether a limit's failure policy admits calls (fail-open, local), which Redis is told of later. */
    private boolean admitsOnFailure(LimitDefinition limit) {
        return policyOf(limit) != FailurePolicy.FAIL_CLOSED;
    }

    /** All or nothing across policies: a fail-closed limit rejects; local ones decide together. */
    private Decisions fallback(List<LimitRequest> requests, CircuitBreaker breaker) {
        List<LimitRequest> local = new ArrayList<>();
        boolean closed = false;
        for (LimitRequest request : requests) {
            this.fallbacks.increment();
            this.outage.fellBack();
            this.onFallback.accept(request.limit());
            FailurePolicy policy = policyOf(request.limit());
            closed |= policy == FailurePolicy.FAIL_CLOSED;
            if (policy == FailurePolicy.LOCAL) {
                local.add(request);
                if (this.lastKnown != null) {
                    this.lastKnown.seed(this.local, request.limit(), request.key(), this.timeSource.currentTimeMillis());
                }
            }
        }
        Decisions localDecisions = (closed || local.isEmpty()) ? null : this.local.tryAcquireAll(local);
        boolean allowed = !closed && (localDecisions == null || localDecisions.allowed());
        if (allowed) {
            long now = this.timeSource.currentTimeMillis();
            requests.forEach((request) -> this.unreported.add(request.limit(), request.key(), request.cost(), now));
        }
        List<Decision> decisions = new ArrayList<>(requests.size());
        for (LimitRequest request : requests) {
            LimitDefinition limit = request.limit();
            int localIndex = local.indexOf(request);
            if (localDecisions != null && localIndex >= 0) {
                decisions.add(localDecisions.get(localIndex));
            }
            else if (policyOf(limit) == FailurePolicy.FAIL_CLOSED) {
                decisions.add(rejection(limit, breaker));
            }
            else {
                decisions.add(new Decision(true, limit.limit(), limit.limit() - (allowed ? request.cost() : 0), 0, 0));
            }
        }
        return new Decisions(allowed, List.copyOf(decisions));
    }

    private Decision rejection(LimitDefinition limit, CircuitBreaker breaker) {
        long pause = breaker.pauseMillis(this.timeSource.currentTimeMillis());
        return new Decision(false, limit.limit(), 0, Math.min(pause, limit.windowMillis()), 0);
    }

    /**
     * Only Redis's own failures count towards the breaker and the outage: a call that timed out while
     * Redis answered others, or whose reply came soon after, was slow here (a paused or busy JVM, a
     * queue), and only this call falls back.
     */
    private void failed(RuntimeException ex, CircuitBreaker breaker) {
        if (ex instanceof RedisTimeoutException timeout) {
            timeout.redisFailed().thenAccept((redisFailed) -> {
                if (redisFailed) {
                    redisFailed(ex, breaker);
                }
                else {
                    this.slowDecisions.increment();
                    this.outage.slowCall(ex);
                    // Its reply came: the shard answers, and can be told what fallbacks admitted.
                    reportToAnswering(breaker);
                }
            });
            return;
        }
        redisFailed(ex, breaker);
    }

    private void redisFailed(RuntimeException ex, CircuitBreaker breaker) {
        breaker.recordFailure(this.timeSource.currentTimeMillis());
        boolean answered = ex.getCause() instanceof RedisCommandExecutionException;
        this.outage.failed(ex, !answered);
    }

    private void succeeded(CircuitBreaker breaker) {
        breaker.recordSuccess();
        // On Cluster, an outage lasts while any shard's breaker stays open, whatever the others do.
        if (this.breakers.size() == 1 || !isCircuitOpen()) {
            this.outage.succeeded();
        }
        reportToAnswering(breaker);
    }

    /**
     * Counts in Redis what fallbacks admitted for the keys of a shard that has just answered. Only
     * that shard's: on Cluster another may still be stalled, and would count a report only in a
     * dataset its promoted replica replaces.
     */
    private void reportToAnswering(CircuitBreaker breaker) {
        if (!this.unreported.isEmpty() && this.reporter != null) {
            this.unreported.report(this.reporter, this.timeSource.currentTimeMillis(),
                    (admitted) -> this.breakers.size() == 1 || breakerOf(admitted.limit(), admitted.key()) == breaker);
        }
    }

    /** A probe found Redis (one server) again: its breaker closes, and what fallbacks admitted meanwhile is counted there. */
    private void redisAnswersAgain() {
        closeBreakers();
        if (this.reporter != null) {
            this.unreported.report(this.reporter, this.timeSource.currentTimeMillis(), (admitted) -> true);
        }
    }

    /** @return permits that fallbacks admitted and that were counted in Redis afterwards, since start */
    public long reportedFallbackPermits() {
        return this.unreported.reported();
    }

}
