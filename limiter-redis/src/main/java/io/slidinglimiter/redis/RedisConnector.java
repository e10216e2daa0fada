package io.slidinglimiter.redis;

import io.lettuce.core.api.StatefulConnection;

/**
 * Where the limiter's Lettuce connection comes from: a plain Lettuce client
 * ({@link LettuceClientConnector}) or an application's Spring Data Redis connection factory
 * ({@link SpringDataRedisConnector}). The runner knows only this, so that it needs no Spring.
 */
interface RedisConnector {

    /**
     * Opens a connection with the byte-array codec, blocking until it is open.
     * @return a standalone, Sentinel-managed or Cluster connection
     */
    StatefulConnection<byte[], byte[]> open();

    /**
     * Stops using a connection whose server must not be talked to again (Sentinel promoted
     * another master), so that the next {@link #open()} reaches the server in charge now.
     * @param connection one that {@link #open()} gave
     */
    void drop(StatefulConnection<byte[], byte[]> connection);

    /**
     * Closes a connection when the runner closes, if it is this connector's to close.
     * @param connection one that {@link #open()} gave
     */
    void close(StatefulConnection<byte[], byte[]> connection);

}
