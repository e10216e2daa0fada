package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.TimeSource;

/**
 * Decides a call's several limits for the resilient backend.
 * <p>
 * On the server, all or nothing, while every shard they go to lets calls through; by the limits'
 * failure policies otherwise. A failure counts against the shard that failed, or is the limits' own
 * ({@link LimitFaults}).
 */
final class SeveralLimits {

    private final RemoteBackend remote;

    private final ShardBreakers breakers;

    private final CallOutcomes outcomes;

    private final FailurePolicies policies;

    private final LimitFaults limitFaults;

    private final TimeSource timeSource;

    private final BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf;

    SeveralLimits(RemoteBackend remote, ShardBreakers breakers, CallOutcomes outcomes, FailurePolicies policies,
            LimitFaults limitFaults, TimeSource timeSource,
            BiFunction<LimitDefinition, String, CircuitBreaker> breakerOf) {
        this.remote = remote;
        this.breakers = breakers;
        this.outcomes = outcomes;
        this.policies = policies;
        this.limitFaults = limitFaults;
        this.timeSource = timeSource;
        this.breakerOf = breakerOf;
    }

    /**
     * Decides several limits all or nothing: on the server while every shard's breaker lets the call
     * through (a failure counted against the failing shard only), else by the failure policies.
     * @param requests the call's limits
     * @return the decisions
     */
    Decisions decide(List<LimitRequest> requests) {
        long sentAtMillis = this.timeSource.currentTimeMillis();
        List<CircuitBreaker> shards = breakersOf(requests);
        CircuitBreaker breaker = shards.get(0);
        if (ShardBreakers.allowAll(shards, sentAtMillis)) {
            try {
                Decisions decisions = this.remote.tryAcquireAll(requests);
                shards.forEach(this.outcomes::recordSuccess);
                for (int i = 0; i < requests.size(); i++) {
                    LimitRequest request = requests.get(i);
                    this.policies.remember(request.limit(), request.key(), decisions.get(i), sentAtMillis);
                }
                return decisions;
            }
            catch (RuntimeException ex) {
                if (ex instanceof ShardFailure shardFailure) {
                    // Only the failing shard's breaker counts it.
                    CircuitBreaker failing = this.breakers.ofOr(shardFailure.shard(), breaker);
                    this.outcomes.recordFailure(shardFailure.failure(), failing);
                    return this.policies.decide(requests, failing);
                }
                if (this.remote.isLimitsOwn(ex)) {
                    this.limitFaults.record(requests.get(0).limit().name(), ex);
                }
                shards.forEach((each) -> this.outcomes.recordFailure(ex, each));
            }
        }
        else {
            breaker = shards.stream().filter(CircuitBreaker::isOpen).findFirst().orElse(breaker);
        }
        return this.policies.decide(requests, breaker);
    }

    /** The breakers of the shards a call's requests go to, each once. */
    private List<CircuitBreaker> breakersOf(List<LimitRequest> requests) {
        List<CircuitBreaker> shards = new ArrayList<>(1);
        for (LimitRequest request : requests) {
            CircuitBreaker breaker = this.breakerOf.apply(request.limit(), request.key());
            if (!shards.contains(breaker)) {
                shards.add(breaker);
            }
        }
        return shards;
    }

}
