package io.slidinglimiter.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The connection of an application's Spring Data Redis connection factory: on a standalone or
 * Sentinel-managed Redis a connection of the limiter's own from the factory's client, with its
 * settings; on Cluster the factory's shared native connection.
 */
final class SpringDataRedisConnector implements RedisConnector {

    private final RedisConnectionFactory connectionFactory;

    /** Whether the connection opened last is the limiter's own (closed by it), not the factory's. */
    private volatile boolean own;

    SpringDataRedisConnector(RedisConnectionFactory connectionFactory) {
        this.connectionFactory = connectionFactory;
    }

    @Override
    @SuppressWarnings("unchecked")
    public StatefulConnection<byte[], byte[]> open() {
        if (this.connectionFactory instanceof LettuceConnectionFactory lettuce
                && lettuce.getNativeClient() instanceof RedisClient client) {
            // With connection pooling on (commons-pool2 present), resetting the factory's shared
            // connection only returns it to the pool, and the next would be the same one, still to a
            // master that Sentinel has replaced: the limiter's own connection can be dropped.
            StatefulConnection<byte[], byte[]> connection = new LettuceClientConnector(client).open();
            this.own = true;
            return connection;
        }
        // With a shared native connection, closing this handle leaves the connection open.
        RedisConnection connection = this.connectionFactory.getConnection();
        Object nativeConnection = connection.getNativeConnection();
        if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
            return (StatefulConnection<byte[], byte[]>) cluster.getStatefulConnection();
        }
        if (nativeConnection instanceof RedisAsyncCommands<?, ?> single) {
            return (StatefulConnection<byte[], byte[]>) single.getStatefulConnection();
        }
        connection.close();
        throw new IllegalStateException("The Redis backend needs Lettuce, but the connection is "
                + nativeConnection.getClass().getName());
    }

    @Override
    public void drop(StatefulConnection<byte[], byte[]> connection) {
        if (this.own) {
            connection.closeAsync();
        }
        else if (this.connectionFactory instanceof LettuceConnectionFactory lettuce) {
            lettuce.resetConnection();
        }
    }

    /** Closes the limiter's own connection; the factory closes its shared one itself (and may have already). */
    @Override
    public void close(StatefulConnection<byte[], byte[]> connection) {
        if (this.own && connection.isOpen()) {
            connection.close();
        }
    }

}
