package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.logging.Logger;

import io.lettuce.core.cluster.StatefulRedisClusterConnectionImpl;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import io.lettuce.core.protocol.ConnectionIntent;

/**
 * Moves a Cluster shard's decisions to the replica that took over its slots as soon as a healthy
 * node says so. The client's own topology refresh asks every node and waits for each up to the
 * client's command timeout (a minute by Spring Boot's default), so a master that stalls (a long
 * fork, swapping) would hold its slots' decisions until it wakes, though the cluster promoted its
 * replica seconds after the stall began.
 * <p>
 * While a node the limiter suspects answers nothing, every {@link #CHECK_EVERY_MILLIS} the other
 * nodes are asked for their view ({@code CLUSTER NODES}, each bounded by the limiter's timeout).
 * When one names another master for the suspect's slots, that view becomes the client's: no
 * decision is sent to the demoted node after that.
 */
final class ClusterFollower {

    /** How often a silent node's slots are looked up on the other nodes. */
    static final long CHECK_EVERY_MILLIS = 200;

    /** How long a node may stay silent before the limiter stops looking for its successor. */
    private static final long GIVE_UP_NANOS = TimeUnit.MINUTES.toNanos(2);

    private static final Logger logger = Logger.getLogger(ClusterFollower.class.getName());

    private final Duration timeout;

    /** Whether a node has answered anything since a moment ({@link System#nanoTime()}). */
    private final BiPredicate<String, Long> answeredSince;

    private final Set<String> suspects = ConcurrentHashMap.newKeySet();

    /**
     * @param timeout the longest each node is waited for
     * @param answeredSince whether a node has answered anything since a moment
     */
    ClusterFollower(Duration timeout, BiPredicate<String, Long> answeredSince) {
        this.timeout = timeout;
        this.answeredSince = answeredSince;
    }

    /**
     * Starts looking for a node's successor, unless it is looked for already.
     * @param connection the limiter's cluster connection
     * @param nodeId the node that failed to answer
     * @param silentSince when the call that it did not answer was sent
     */
    void suspect(StatefulRedisClusterConnection<byte[], byte[]> connection, String nodeId, long silentSince) {
        if (this.suspects.add(nodeId)) {
            follow(connection, nodeId, silentSince);
        }
    }

    private void follow(StatefulRedisClusterConnection<byte[], byte[]> connection, String nodeId, long silentSince) {
        if (!connection.isOpen() || this.answeredSince.test(nodeId, silentSince)
                || System.nanoTime() - silentSince > GIVE_UP_NANOS) {
            this.suspects.remove(nodeId);
            return;
        }
        successorFound(connection, nodeId).whenComplete((found, failure) -> {
            if (Boolean.TRUE.equals(found)) {
                this.suspects.remove(nodeId);
                return;
            }
            CompletableFuture.delayedExecutor(CHECK_EVERY_MILLIS, TimeUnit.MILLISECONDS)
                    .execute(() -> follow(connection, nodeId, silentSince));
        });
    }

    /**
     * Asks the other nodes for their view; completes with whether the suspect's slots moved (and
     * the client now routes them to their new owner).
     */
    private CompletableFuture<Boolean> successorFound(StatefulRedisClusterConnection<byte[], byte[]> connection,
            String nodeId) {
        Partitions partitions = connection.getPartitions();
        RedisClusterNode suspect = partitions.getPartitionByNodeId(nodeId);
        if (suspect == null || suspect.getSlots().isEmpty()) {
            return CompletableFuture.completedFuture(true);
        }
        int slot = suspect.getSlots().get(0);
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (RedisClusterNode node : partitions) {
            if (!node.getNodeId().equals(nodeId)) {
                answers.add(connection.getConnectionAsync(node.getNodeId(), ConnectionIntent.WRITE)
                        .thenCompose((nodeConnection) -> nodeConnection.async().clusterNodes())
                        .orTimeout(this.timeout.toNanos(), TimeUnit.NANOSECONDS)
                        .thenApply((view) -> adopted(connection, nodeId, slot, view))
                        .exceptionally((failure) -> false));
            }
        }
        CompletableFuture<Boolean> found = new CompletableFuture<>();
        answers.forEach((answer) -> answer.thenAccept((moved) -> {
            if (moved) {
                found.complete(true);
            }
        }));
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                .whenComplete((done, failure) -> found.complete(false));
        return found;
    }

    /**
     * Makes a node's view the client's if it gives the suspect's slot to another master that the
     * client knows, and every node it lists is known too (so that each keeps its connection
     * settings); a view with nodes the client has not seen is left to the client's own refresh.
     */
    private synchronized boolean adopted(StatefulRedisClusterConnection<byte[], byte[]> connection, String nodeId,
            int slot, String clusterNodes) {
        Partitions partitions = connection.getPartitions();
        RedisClusterNode suspect = partitions.getPartitionByNodeId(nodeId);
        if (suspect == null || !suspect.hasSlot(slot)) {
            return true;
        }
        Partitions view = ClusterPartitionParser.parse(clusterNodes);
        RedisClusterNode owner = view.getPartitionBySlot(slot);
        if (owner == null || owner.getNodeId().equals(nodeId) || !owner.is(NodeFlag.UPSTREAM)
                || partitions.getPartitionByNodeId(owner.getNodeId()) == null) {
            return false;
        }
        List<RedisClusterNode> nodes = new ArrayList<>();
        for (RedisClusterNode fresh : view) {
            RedisClusterNode known = partitions.getPartitionByNodeId(fresh.getNodeId());
            if (known == null) {
                return false;
            }
            RedisClusterNode node = new RedisClusterNode(fresh);
            node.setUri(known.getUri());
            known.getAliases().forEach(node::addAlias);
            nodes.add(node);
        }
        partitions.reload(nodes);
        if (connection instanceof StatefulRedisClusterConnectionImpl<byte[], byte[]> impl) {
            // Drops the connection's slot-to-node cache, as the client's own refresh does.
            impl.setPartitions(partitions);
        }
        logger.info(() -> "Redis Cluster gave the slots of node " + nodeId + " (" + suspect.getUri().getHost() + ":"
                + suspect.getUri().getPort() + ") to node " + owner.getNodeId() + "; the rate limiter's decisions"
                + " for them move there now.");
        return true;
    }

}
