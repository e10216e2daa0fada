package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToIntFunction;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

/**
 * Where a call's counters live in Redis.
 * <p>
 * Their keys, hash slots and shards.
 * <p>
 * Off Cluster every key is on the one server, the shard {@code ""}, and a call's limits are one group.
 */
final class RedisRoutes {

    /** A call of one limit: its keys are one group. */
    private static final List<List<Integer>> ONE = List.of(List.of(0));

    private final RedisScriptRunner runner;

    private final RedisKeys keys;

    private final ToIntFunction<byte[]> slotOf;

    /**
     * @param runner knows the Cluster's nodes
     * @param keys the key scheme
     * @param slotOf the Cluster hash slot of a key, or null when Redis is not a Cluster
     */
    RedisRoutes(RedisScriptRunner runner, RedisKeys keys, ToIntFunction<byte[]> slotOf) {
        this.runner = runner;
        this.keys = keys;
        this.slotOf = slotOf;
    }

    /**
     * Where the counters of a call's limits are: their keys, built once, and the shard that holds
     * the first (its Cluster node, so that failures, the breaker and fallbacks stay on it; {@code ""}
     * elsewhere), its slot computed once.
     *
     * @param keys the counter keys, one per request
     * @param shard the shard's id
     */
    record Route(byte[][] keys, String shard) {
    }

    /**
     * The route of a call's requests.
     * @param requests the limits asked
     * @return their keys and shard
     */
    Route of(List<LimitRequest> requests) {
        byte[][] counterKeys = new byte[requests.size()][];
        for (int i = 0; i < counterKeys.length; i++) {
            counterKeys[i] = this.keys.counterKey(requests.get(i).limit().name(), requests.get(i).key());
        }
        return new Route(counterKeys, (this.slotOf == null) ? "" : this.runner.nodeOf(counterKeys[0]));
    }

    /**
     * The route of one key.
     * @param limit the limit
     * @param key the key
     * @return its key and shard
     */
    Route of(LimitDefinition limit, String key) {
        byte[] counterKey = this.keys.counterKey(limit.name(), key);
        return new Route(new byte[][] { counterKey }, (this.slotOf == null) ? "" : this.runner.nodeOf(counterKey));
    }

    /**
     * The shard of one key, without building its key off Cluster.
     * @param limit the limit
     * @param key the key
     * @return as {@link Route#shard()} names it
     */
    String shardOf(LimitDefinition limit, String key) {
        return (this.slotOf == null) ? "" : this.runner.nodeOf(this.keys.counterKey(limit.name(), key));
    }

    /**
     * The shards that hold counters now.
     * @return as {@link Route#shard()} names them
     */
    Set<String> shards() {
        return (this.slotOf == null) ? Set.of("") : this.runner.nodes();
    }

    /**
     * Whether a call's limits are decided by one script run: off Cluster, or in one slot.
     * @param requests the limits asked
     * @return whether they are one group
     */
    boolean oneGroup(List<LimitRequest> requests) {
        return this.slotOf == null || requests.size() == 1 || groups(requests).size() == 1;
    }

    /**
     * Requests by hash slot, in slot order; one group when Redis is not a Cluster.
     * @param requests the limits asked
     * @return the indexes of each group's requests
     */
    List<List<Integer>> groups(List<LimitRequest> requests) {
        if (requests.size() == 1) {
            return ONE;
        }
        List<Integer> all = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            all.add(i);
        }
        if (this.slotOf == null) {
            return List.of(all);
        }
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        all.stream().sorted((a, b) -> Integer.compare(slot(requests.get(a)), slot(requests.get(b))))
                .forEach((i) -> bySlot.computeIfAbsent(slot(requests.get(i)), (slot) -> new ArrayList<>()).add(i));
        return List.copyOf(bySlot.values());
    }

    /**
     * The Cluster hash slot of a key's counter.
     * @param limit the limit
     * @param key the key
     * @return its slot, 0 off Cluster
     */
    int slotOf(LimitDefinition limit, String key) {
        return (this.slotOf == null) ? 0 : this.slotOf.applyAsInt(this.keys.counterKey(limit.name(), key));
    }

    private int slot(LimitRequest request) {
        return slotOf(request.limit(), request.key());
    }

}
