package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.TimeSource;

/**
 * Decides without the server, by each limit's {@link FailurePolicy}: fail-open admits, fail-closed
 * rejects until the shard's breaker lets a call through, local counts in-process from what the server
 * last said the key used. What the policy admits is kept until the server can be told of it
 * ({@link UnreportedAdmissions}).
 */
final class FailurePolicies {

    private final FailurePolicy defaultPolicy;

    private final Map<String, FailurePolicy> policies;

    private final RateLimitBackend local;

    /** For local-policy limits: what the server last said each key used, to start the local counter from; or null. */
    private final LastKnownUsage lastKnown;

    private final UnreportedAdmissions unreported;

    private final Consumer<LimitDefinition> onFallback;

    private final Outage outage;

    private final TimeSource timeSource;

    private final LongAdder fallbacks = new LongAdder();

    /**
     * @param defaultPolicy the policy of limits without their own
     * @param policies the policy of each limit that has its own, by name
     * @param maxKeys the most keys whose last known usage is kept (0: none)
     * @param local the in-process backend of the local policy
     * @param unreported keeps what the policy admitted
     * @param onFallback told of each decision taken without the server
     * @param outage told of each fallback
     * @param timeSource the clock of the admissions
     */
    FailurePolicies(FailurePolicy defaultPolicy, Map<String, FailurePolicy> policies, int maxKeys,
            RateLimitBackend local, UnreportedAdmissions unreported, Consumer<LimitDefinition> onFallback,
            Outage outage, TimeSource timeSource) {
        this.defaultPolicy = defaultPolicy;
        this.policies = Map.copyOf(policies);
        boolean anyLocal = this.defaultPolicy == FailurePolicy.LOCAL || this.policies.containsValue(FailurePolicy.LOCAL);
        this.lastKnown = (anyLocal && maxKeys > 0) ? new LastKnownUsage(maxKeys) : null;
        this.local = local;
        this.unreported = unreported;
        this.onFallback = onFallback;
        this.outage = outage;
        this.timeSource = timeSource;
    }

    FailurePolicy defaultPolicy() {
        return this.defaultPolicy;
    }

    FailurePolicy policyOf(String limitName) {
        return this.policies.getOrDefault(limitName, this.defaultPolicy);
    }

    /** @return decisions taken without the server since start */
    long fallbackDecisions() {
        return this.fallbacks.sum();
    }

    /** @return permits the policy admitted that were counted on the server afterwards */
    long reportedFallbackPermits() {
        return this.unreported.reported();
    }

    /** Decides one limit by its policy; a fail-closed rejection waits for {@code breaker}. */
    Decision decide(LimitDefinition limit, String key, long cost, CircuitBreaker breaker) {
        fellBack(limit);
        Decision decision = switch (policyOf(limit.name())) {
            case FAIL_OPEN -> new Decision(true, limit.limit(), limit.limit() - cost, 0, 0);
            case FAIL_CLOSED -> rejection(limit, breaker);
            case LOCAL -> {
                seedLocal(limit, key);
                yield this.local.tryAcquire(limit, key, cost);
            }
        };
        if (decision.allowed()) {
            this.unreported.add(limit, key, cost, this.timeSource.currentTimeMillis());
        }
        return decision;
    }

    /** All or nothing across policies: a fail-closed limit rejects; local ones decide together. */
    Decisions decide(List<LimitRequest> requests, CircuitBreaker breaker) {
        List<LimitRequest> local = new ArrayList<>();
        boolean closed = false;
        for (LimitRequest request : requests) {
            fellBack(request.limit());
            FailurePolicy policy = policyOf(request.limit().name());
            closed |= policy == FailurePolicy.FAIL_CLOSED;
            if (policy == FailurePolicy.LOCAL) {
                local.add(request);
                seedLocal(request.limit(), request.key());
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
            else if (policyOf(limit.name()) == FailurePolicy.FAIL_CLOSED) {
                decisions.add(rejection(limit, breaker));
            }
            else {
                decisions.add(new Decision(true, limit.limit(), limit.limit() - (allowed ? request.cost() : 0), 0, 0));
            }
        }
        return new Decisions(allowed, List.copyOf(decisions));
    }

    /**
     * Changes what the server will be told of calls the policy admitted, by what they finally cost.
     * @param requests the requests admitted together
     * @param charges what each finally costs
     */
    void settle(List<LimitRequest> requests, long[] charges) {
        long now = this.timeSource.currentTimeMillis();
        for (int i = 0; i < requests.size(); i++) {
            LimitRequest request = requests.get(i);
            if (policyOf(request.limit().name()) != FailurePolicy.FAIL_CLOSED) {
                this.unreported.add(request.limit(), request.key(), charges[i] - request.cost(), now);
            }
        }
    }

    /** Remembers what the server said a key of a local-policy limit used, to start its local counter from. */
    void remember(LimitDefinition limit, String key, Decision decision, long sentAtMillis) {
        if (this.lastKnown != null && policyOf(limit.name()) == FailurePolicy.LOCAL) {
            this.lastKnown.record(limit, key, decision, sentAtMillis);
        }
    }

    /** Forgets what the server last said of a key: it was reset. */
    void forget(String limitName, String key) {
        if (this.lastKnown != null) {
            this.lastKnown.remove(limitName, key);
        }
    }

    private void fellBack(LimitDefinition limit) {
        this.fallbacks.increment();
        this.outage.fellBack();
        this.onFallback.accept(limit);
    }

    private void seedLocal(LimitDefinition limit, String key) {
        if (this.lastKnown != null) {
            this.lastKnown.seed(this.local, limit, key, this.timeSource.currentTimeMillis());
        }
    }

    private Decision rejection(LimitDefinition limit, CircuitBreaker breaker) {
        long pause = breaker.pauseMillis(this.timeSource.currentTimeMillis());
        return new Decision(false, limit.limit(), 0, Math.min(pause, limit.windowMillis()), 0);
    }

}
