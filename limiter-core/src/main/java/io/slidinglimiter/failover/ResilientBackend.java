package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;

/**
 * A {@link RemoteBackend} as applications use it: no exception for a fault of its server.
 * <p>
 * Never a wait longer than the backend's own timeout, and no wait at all while the server is known
 * to be down.
 * <ul>
 * <li>A decision that the server fails or answers too late follows the limit's {@link FailurePolicy}
 * (fail-open, fail-closed, or a local counter at the same limit), and is reported to
 * {@code onFallback}.</li>
 * <li>After {@code failureThreshold} failures in a row a circuit breaker stops calling the shard for
 * {@code openMillis}, then probes with a single call: decisions meanwhile follow the policy at
 * local speed, and the shard is used again as soon as a probe succeeds.</li>
 * <li>A key that the server reported out of permits until {@code T} is rejected locally until
 * {@code T}, at most {@value #DENIAL_CACHE_MILLIS} ms (the denial cache), which never admits what the
 * server would reject.</li>
 * <li>Only the server's own failures count: a call that timed out while the server answered others,
 * or whose reply came soon after ({@link LateFailure}), was slow in this JVM
 * ({@link FailoverStatus#slowDecisions()}) and falls back alone; a failure of one limit's own values
 * or data ({@link RemoteBackend#isLimitsOwn}) falls back for that limit's calls only, logged once,
 * tripping no breaker.</li>
 * <li>Limits that lease ({@link RemoteLeases}) admit a busy key's calls from permits taken from the
 * server in batches; a live lease keeps admitting what it holds while the server fails.</li>
 * <li>What a {@code fail-open} or {@code local} fallback admitted is counted on the server once it
 * answers again: its count and every instance's later decisions include it.</li>
 * <li>An outage is logged when it starts, with its cause, summed up each minute while it lasts,
 * and logged when it ends; while the server is out of reach a probe finds it again without traffic.
 * Fallbacks of slow calls while the server was answering are logged apart, as this application's
 * overload.</li>
 * </ul>
 */
public class ResilientBackend implements RateLimitBackend {

    /** The longest a denial is answered locally: how long a reset or a new limit takes to reach every instance. */
    public static final long DENIAL_CACHE_MILLIS = 1_000;

    private final RemoteBackend remote;

    private final RateLimitBackend local;

    private final TimeSource timeSource;

    private final ShardBreakers breakers;

    /** Denials the server gave, answered here until they end; null when the cache is off. */
    private final DenialCache denials;

    private final FailurePolicies policies;

    private final Outage outage;

    /** This instance's leases, when a limit leases; null otherwise. */
    private final RemoteLeases leases;

    /** What each call's outcome tells of the server: for the breakers, the outage, slow calls and reports. */
    private final CallOutcomes outcomes;

    private final FailoverStatus status;

    /** Failures of one limit's own values or data, which are not the server's. */
    private final LimitFaults limitFaults;

    /** Decides a call's several limits. */
    private final SeveralLimits acrossLimits;

    /**
     * Creates the backend.
     * @param remote the backend that decides on the server
     * @param local the in-process backend of the {@link FailurePolicy#LOCAL local} policy
     * @param settings the policies, breaker and cache settings
     * @param timeSource the clock of the breaker and the denial cache (durations only)
     * @param onFallback told of each decision taken without the server
     * @param probe a read that answers whether the server is reachable again, run twice a second while
     * it is not; null for none
     * @param leases the backend's leases; null when no limit leases
     */
    public ResilientBackend(RemoteBackend remote, RateLimitBackend local, Settings settings, TimeSource timeSource,
            Consumer<LimitDefinition> onFallback, BooleanSupplier probe, RemoteLeases leases) {
        this.remote = remote;
        this.local = local;
        this.timeSource = timeSource;
        this.breakers = new ShardBreakers(settings.failureThreshold(), settings.openMillis(), remote::shards);
        this.denials = (settings.denialCacheSize() > 0)
                ? new DenialCache(settings.denialCacheSize(), DENIAL_CACHE_MILLIS) : null;
        UnreportedAdmissions unreported = new UnreportedAdmissions(settings.maxKeys());
        this.outcomes = new CallOutcomes(this.breakers, timeSource, probe, remote, unreported, this::breakerOf);
        this.outage = this.outcomes.outage();
        this.policies = new FailurePolicies(settings.defaultPolicy(), settings.policies(), settings.denialCacheSize(),
                local, unreported, onFallback, this.outage, timeSource);
        this.leases = leases;
        this.limitFaults = new LimitFaults(remote);
        this.acrossLimits = new SeveralLimits(remote, this.breakers, this.outcomes, this.policies, this.limitFaults,
                timeSource, this::breakerOf);
        this.status = new FailoverStatus(this.outage, this.breakers, this.policies, this.outcomes.slowCalls(), leases);
    }

    /**
     * How the backend behaves when the server fails.
     *
     * @param defaultPolicy the policy of limits without their own
     * @param policies the policy of each limit that has its own, by name
     * @param failureThreshold failures in a row that open the circuit breaker
     * @param openMillis how long the breaker stays open before a probe
     * @param denialCacheSize the most denials kept locally; 0 turns the cache off
     */
    public record Settings(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int failureThreshold,
            long openMillis, int denialCacheSize) {

        /**
         * The most keys this instance keeps state for (fallback admissions, leases), also with the
         * denial cache off.
         * @return the denial cache's size, or 100 000 when it is off
         */
        public int maxKeys() {
            return (this.denialCacheSize > 0) ? this.denialCacheSize : 100_000;
        }

    }

    /**
     * What this backend can tell of its failover, for health and the endpoint.
     * @return its status, which only reads
     */
    public FailoverStatus failoverStatus() {
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
        return (here != null) ? here : decideRemotely(requests, null).toCompletableFuture().join();
    }

    /**
     * {@inheritDoc}
     * <p>
     * One limit is decided on the backend's asynchronous path, by the same steps as {@link #tryAcquire};
     * several limits are decided by {@link #tryAcquireAll} on {@code blocking}.
     */
    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        if (requests.size() != 1) {
            return RateLimitBackend.super.tryAcquireAllAsync(requests, blocking);
        }
        Decisions here = answeredHere(requests.get(0));
        return (here != null) ? CompletableFuture.completedFuture(here) : decideRemotely(requests, blocking);
    }

    /** One limit without a round trip: from the key's lease, or by a denial the server gave; null otherwise. */
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
     * One limit that needs the server: the failure policy while the shard's breaker keeps calls away;
     * else the key's next lease (or the one another thread is taking), or the server's decision. On
     * this thread when {@code blocking} is null (the stage returned is then complete), else without
     * blocking one. Keeps the time the server decided at, which a settle needs; zero when it did not.
     */
    private CompletionStage<Decisions> decideRemotely(List<LimitRequest> requests, Executor blocking) {
        LimitRequest request = requests.get(0);
        LimitDefinition limit = request.limit();
        String key = request.key();
        long cost = request.cost();
        CircuitBreaker breaker = this.breakers.of(this.remote.shardOf(limit, key));
        long sentAtMillis = this.timeSource.currentTimeMillis();
        if (!breaker.allowsCall(sentAtMillis)) {
            return CompletableFuture.completedFuture(single(this.policies.decide(limit, key, cost, breaker), 0));
        }
        boolean leased = leases(limit);
        CompletionStage<LeaseStep> step = leased
                ? this.leases.next(limit, key, cost, sentAtMillis, blocking) : null;
        if (step == null) {
            return decideOnServer(requests, breaker, leased, blocking);
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
                // Answered without a call: a probe the breaker granted it goes back for the next call.
                breaker.returnProbe();
                return CompletableFuture.completedFuture((admitted != null) ? admitted : single(denied, 0));
            }
            return decideOnServer(requests, breaker, true, blocking);
        });
    }

    /** Whether a limit takes leases on this instance. */
    private boolean leases(LimitDefinition limit) {
        return this.leases != null && this.leases.covers(limit);
    }

    /**
     * One limit decided by the server as without leases (counted so for a limit that leases): on this
     * thread when {@code blocking} is null.
     */
    private CompletionStage<Decisions> decideOnServer(List<LimitRequest> requests, CircuitBreaker breaker,
            boolean leased, Executor blocking) {
        LimitRequest request = requests.get(0);
        if (leased) {
            this.leases.countOnServer(request.limit());
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        if (blocking != null) {
            return this.remote.tryAcquireAllAsync(requests, blocking)
                    .handle((decisions, failure) -> decided(request, decisions, failure, sentAtMillis, breaker));
        }
        Decisions decisions;
        try {
            decisions = this.remote.tryAcquireAll(requests);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.completedFuture(decided(request, null, ex, sentAtMillis, breaker));
        }
        return CompletableFuture.completedFuture(decided(request, decisions, null, sentAtMillis, breaker));
    }

    /** What the server's answer, or its failure, makes of one limit's call. */
    private Decisions decided(LimitRequest request, Decisions decisions, Throwable failure, long sentAtMillis,
            CircuitBreaker breaker) {
        if (failure != null) {
            return single(failedOver(unwrapped(failure), request.limit(), request.key(),
                    request.cost(), breaker), 0);
        }
        return single(recordDecision(decisions.get(0), request.limit(), request.key(), request.cost(), sentAtMillis,
                breaker), decisions.decidedAtMillis());
    }

    private static Decisions single(Decision decision, long decidedAtMillis) {
        return new Decisions(decision.allowed(), List.of(decision), decidedAtMillis);
    }

    /** The denial cached for a key while the server said it is out of permits, or null. */
    private Decision cachedDenial(LimitDefinition limit, String key) {
        return (this.denials != null) ? this.denials.get(limit, key, this.timeSource.currentTimeMillis()) : null;
    }

    /** The server decided: the breaker closes, and the decision is remembered for the policy and the cache. */
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

    /** The server did not decide: the failure counts against the shard, and the policy decides. */
    private Decision failedOver(RuntimeException ex, LimitDefinition limit, String key, long cost,
            CircuitBreaker breaker) {
        if (this.remote.isLimitsOwn(ex)) {
            this.limitFaults.record(limit.name(), ex);
        }
        this.outcomes.recordFailure(ex, breaker);
        return this.policies.decide(limit, key, cost, breaker);
    }

    private CircuitBreaker breakerOf(LimitDefinition limit, String key) {
        return this.breakers.of(this.remote.shardOf(limit, key));
    }

    /** The failure a stage completed with, without the wrapping of the stage. */
    private static RuntimeException unwrapped(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return (cause instanceof RuntimeException runtime) ? runtime
                : new IllegalStateException("The server failed: " + cause.getMessage(), cause);
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        try {
            this.remote.refund(requests, taken);
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
     * the server is recorded against the breaker and thrown. A call that the failure policy admitted
     * is settled in what the server will be told of it once it answers.
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        if (taken.decidedAtMillis() == 0) {
            // Admitted by the failure policy, not by the server: what it will be told changes instead.
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
            this.remote.settle(requests, taken, charges);
        }
        catch (RuntimeException ex) {
            this.outcomes.recordFailure(ex, breakerOf(requests.get(0).limit(), requests.get(0).key()));
            throw ex;
        }
    }

    /** Itself, the remote backend, and the local backend its {@code local} policy decides with. */
    @Override
    public List<RateLimitBackend> parts() {
        List<RateLimitBackend> parts = new ArrayList<>();
        parts.add(this);
        parts.addAll(this.remote.parts());
        parts.addAll(this.local.parts());
        return List.copyOf(parts);
    }

    /** What the remote backend can hold. */
    @Override
    public long largestLimit(LimitDefinition limit) {
        return this.remote.largestLimit(limit);
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
            return this.remote.usage(limit, key, cost);
        }
        catch (RuntimeException ex) {
            this.outcomes.recordFailure(ex, breakerOf(limit, key));
            return this.local.usage(limit, key, cost);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * The server's counters, this instance's fallback counts and its cached denials. Throws when the
     * server fails: a reset that did not happen must not look as if it had.
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
        this.remote.resetAll();
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
        this.remote.reset(limit, key);
    }

    @Override
    public void close() {
        if (this.leases != null) {
            this.leases.close();
        }
        this.outage.close();
        this.local.close();
        this.remote.close();
    }

    /**
     * The server behind the connection changed (a replica was promoted): the old one's failures
     * say nothing of the new one, so the breakers close and the next decision tries it.
     */
    public void serverChanged() {
        this.breakers.closeAll();
    }

    /**
     * Gives back what every lease holds and takes no more: for an application that stops, once it
     * takes no more requests and before its connections close. Decisions go on without leases.
     */
    public void endLeases() {
        if (this.leases != null) {
            this.leases.close();
        }
    }

    /** Gives back the leases that ended without traffic now: for tests that replay a schedule. */
    public void sweepLeases() {
        if (this.leases != null) {
            this.leases.sweep();
        }
    }

}
