package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One {@link CircuitBreaker} per shard of the server (a Redis Cluster node; the one server elsewhere, named
 * {@code ""}), so that a sick shard never stops the others. A node that was replaced (its replica
 * promoted) leaves its breaker behind, which is dropped once it no longer serves keys.
 */
final class ShardBreakers {

    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();

    private final int failureThreshold;

    private final long openMillis;

    /** The shards that serve keys now. */
    private final Supplier<Set<String>> liveShards;

    /**
     * @param failureThreshold failures in a row that open a shard's breaker
     * @param openMillis how long a breaker stays open before a probe
     * @param liveShards the shards that serve keys now
     */
    ShardBreakers(int failureThreshold, long openMillis, Supplier<Set<String>> liveShards) {
        this.failureThreshold = failureThreshold;
        this.openMillis = openMillis;
        this.liveShards = liveShards;
    }

    /** The breaker of a shard, made on first use. */
    CircuitBreaker of(String shard) {
        CircuitBreaker breaker = this.breakers.get(shard);
        return (breaker != null) ? breaker
                : this.breakers.computeIfAbsent(shard, (ignored) -> new CircuitBreaker(this.failureThreshold,
                        this.openMillis));
    }

    /** The breaker of a shard if it has one, else {@code otherwise}. */
    CircuitBreaker ofOr(String shard, CircuitBreaker otherwise) {
        return this.breakers.getOrDefault(shard, otherwise);
    }

    /** Whether the server is one shard (or no call went to more than one yet). */
    boolean single() {
        return this.breakers.size() <= 1;
    }

    /**
     * Whether every breaker lets a call through; a probe one of them granted is handed back if not.
     * @param shards the breakers of a call's shards, each once
     * @param nowMillis the time now
     * @return whether the call may go to the server
     */
    static boolean allowAll(List<CircuitBreaker> shards, long nowMillis) {
        for (int i = 0; i < shards.size(); i++) {
            if (!shards.get(i).allowsCall(nowMillis)) {
                for (int granted = 0; granted < i; granted++) {
                    shards.get(granted).returnProbe();
                }
                return false;
            }
        }
        return true;
    }

    /** Closes every breaker: the server behind them changed, or a probe found the server again. */
    void closeAll() {
        this.breakers.values().forEach(CircuitBreaker::recordSuccess);
    }

    /** @return whether a breaker keeps calls away from a shard that serves keys */
    boolean anyOpen() {
        return !openShards().isEmpty();
    }

    /**
     * The shards whose breaker keeps calls away now, sorted; the breakers of shards that serve no
     * key any more are dropped.
     * @return their names
     */
    List<String> openShards() {
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

}
