package io.slidinglimiter.autoconfigure;

import java.util.stream.Collectors;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Where an application's Redis connection factory connects, in words for a log line.
 * <p>
 * A host and
 * port, a Sentinel master and its Sentinels, or a Cluster's nodes.
 */
final class RedisAddress {

    private RedisAddress() {
    }

    static String of(RedisConnectionFactory factory) {
        if (!(factory instanceof LettuceConnectionFactory lettuce)) {
            return (factory != null) ? "the application's " + factory.getClass().getSimpleName() : "(no factory)";
        }
        RedisClusterConfiguration cluster = lettuce.getClusterConfiguration();
        if (cluster != null) {
            return "Cluster " + nodes(cluster.getClusterNodes());
        }
        RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
        if (sentinel != null) {
            String master = (sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?";
            return "master '" + master + "' of Sentinels " + nodes(sentinel.getSentinels());
        }
        return lettuce.getHostName() + ":" + lettuce.getPort();
    }

    private static String nodes(Iterable<RedisNode> nodes) {
        return java.util.stream.StreamSupport.stream(nodes.spliterator(), false).map(RedisNode::asString)
                .collect(Collectors.joining(", ", "[", "]"));
    }

}
