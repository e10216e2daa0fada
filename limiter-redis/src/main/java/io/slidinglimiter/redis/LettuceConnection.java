package io.slidinglimiter.redis;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

/**
 * The runner's connection to Redis.
 * <p>
 * Opened once in the background (never on a decision's thread),
 * opened again after a failure or when told to, and the client's view of which Cluster node serves
 * a key.
 */
final class LettuceConnection {

    private final RedisConnector connector;

    private volatile CompletableFuture<Opened> connection;

    LettuceConnection(RedisConnector connector) {
        this.connector = connector;
    }

    /** The connection, opened once in the background; opened again after a failure. */
    CompletableFuture<Opened> get() {
        CompletableFuture<Opened> current = this.connection;
        if (current != null && !current.isCompletedExceptionally()) {
            return current;
        }
        synchronized (this) {
            if (this.connection == current) {
                this.connection = CompletableFuture.supplyAsync(() -> Opened.of(this.connector.open()));
            }
            return this.connection;
        }
    }

    /** The connection if it was opened, without waiting for it; else null. */
    Opened opened() {
        CompletableFuture<Opened> current = this.connection;
        return (current != null && current.isDone() && !current.isCompletedExceptionally()) ? current.join() : null;
    }

    /** @return whether an opened connection is open now */
    boolean isOpen() {
        Opened opened = opened();
        return opened != null && opened.stateful().isOpen();
    }

    /** The cluster connection, once opened to a Cluster; else null. */
    StatefulRedisClusterConnection<byte[], byte[]> cluster() {
        Opened opened = opened();
        return (opened != null && opened.stateful() instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)
                ? cluster : null;
    }

    /** Opens a new connection at once when the current one is closed. */
    void reconnectIfClosed() {
        Opened opened = opened();
        if (opened != null && !opened.stateful().isOpen()) {
            reconnect();
        }
    }

    /** Makes the connection anew, whatever its state: the next command opens a new connection. */
    void reconnect() {
        CompletableFuture<Opened> current = this.connection;
        Opened opened = opened();
        if (opened != null) {
            this.connector.drop(opened.stateful());
        }
        synchronized (this) {
            if (this.connection == current) {
                this.connection = null;
            }
        }
    }

    /** Closes the limiter's own connection, if it has one; the factory closes a shared one. */
    void close() {
        Opened opened = opened();
        if (opened != null) {
            this.connector.close(opened.stateful());
        }
    }

    /**
     * The Redis node that serves a key: on Cluster its node id, as the client's view of the slots
     * has it now (it changes when a replica is promoted); otherwise {@code ""}.
     */
    String nodeOf(byte[] key) {
        StatefulRedisClusterConnection<byte[], byte[]> cluster = cluster();
        if (cluster == null) {
            return "";
        }
        RedisClusterNode node = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        return (node != null && node.getNodeId() != null) ? node.getNodeId() : "";
    }

    /** The nodes that serve slots now, as {@link #nodeOf} names them; {@code ""} alone off a Cluster. */
    Set<String> nodes() {
        StatefulRedisClusterConnection<byte[], byte[]> cluster = cluster();
        if (cluster == null) {
            return Set.of("");
        }
        Set<String> serving = new HashSet<>();
        for (RedisClusterNode node : cluster.getPartitions()) {
            if (!node.getSlots().isEmpty() && node.getNodeId() != null) {
                serving.add(node.getNodeId());
            }
        }
        return serving;
    }

    /**
     * An open connection and its asynchronous commands.
     *
     * @param stateful the connection, which tells whether it is open (Lettuce 6 and 7 alike)
     * @param commands its asynchronous commands
     */
    record Opened(StatefulConnection<byte[], byte[]> stateful, RedisClusterAsyncCommands<byte[], byte[]> commands) {

        static Opened of(StatefulConnection<byte[], byte[]> stateful) {
            if (stateful instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
                return new Opened(stateful, cluster.async());
            }
            if (stateful instanceof StatefulRedisConnection<byte[], byte[]> single) {
                return new Opened(stateful, single.async());
            }
            throw new IllegalStateException("The Redis backend needs a Redis or Redis Cluster connection, not "
                    + stateful.getClass().getName());
        }

    }

}
