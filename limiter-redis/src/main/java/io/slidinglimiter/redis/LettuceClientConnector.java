package io.slidinglimiter.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;

/** A connection of the limiter's own from a Lettuce client, standalone, Sentinel or Cluster. */
final class LettuceClientConnector implements RedisConnector {

    private final AbstractRedisClient client;

    /**
     * @param client a {@link RedisClient} or a {@link RedisClusterClient}
     * @throws IllegalArgumentException for another kind of client
     */
    LettuceClientConnector(AbstractRedisClient client) {
        if (!(client instanceof RedisClient) && !(client instanceof RedisClusterClient)) {
            throw new IllegalArgumentException("The Redis backend needs a RedisClient or a RedisClusterClient, not "
                    + client.getClass().getName());
        }
        this.client = client;
    }

    @Override
    public StatefulConnection<byte[], byte[]> open() {
        return (this.client instanceof RedisClusterClient cluster) ? cluster.connect(ByteArrayCodec.INSTANCE)
                : ((RedisClient) this.client).connect(ByteArrayCodec.INSTANCE);
    }

    @Override
    public void drop(StatefulConnection<byte[], byte[]> connection) {
        connection.closeAsync();
    }

    @Override
    public void close(StatefulConnection<byte[], byte[]> connection) {
        connection.close();
    }

}
