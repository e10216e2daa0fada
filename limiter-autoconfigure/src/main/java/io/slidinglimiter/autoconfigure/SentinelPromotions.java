package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.autoconfigure.LimiterRedisAutoConfiguration.LimiterRedis;
import io.slidinglimiter.redis.SentinelFollower;

/** Listens to the sentinels once every bean exists, when the connection factory uses Sentinel. */
final class SentinelPromotions implements SmartInitializingSingleton, DisposableBean {

    private final RedisConnectionFactory connectionFactory;

    private final LimiterRedis limiterRedis;

    private volatile SentinelFollower follower;

    SentinelPromotions(RedisConnectionFactory connectionFactory, LimiterRedis limiterRedis) {
        this.connectionFactory = connectionFactory;
        this.limiterRedis = limiterRedis;
    }

    /** @return whether the sentinels are listened to */
    boolean isFollowing() {
        return this.follower != null;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (!(this.connectionFactory instanceof LettuceConnectionFactory lettuce)
                || lettuce.getSentinelConfiguration() == null) {
            return;
        }
        RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
        List<RedisURI> sentinels = new ArrayList<>();
        for (RedisNode node : sentinel.getSentinels()) {
            RedisURI.Builder uri = RedisURI.builder().withHost(node.getHost()).withPort(node.getPort());
            if (sentinel.getSentinelPassword().isPresent() && sentinel.getSentinelUsername() != null) {
                uri.withAuthentication(sentinel.getSentinelUsername(), sentinel.getSentinelPassword().get());
            }
            else if (sentinel.getSentinelPassword().isPresent()) {
                uri.withPassword(sentinel.getSentinelPassword().get());
            }
            sentinels.add(uri.build());
        }
        this.follower = SentinelFollower.forLimiter(this.limiterRedis.runner(), this.limiterRedis.backend(),
                sentinel.getMaster().getName(), sentinels);
    }

    @Override
    public void destroy() {
        if (this.follower != null) {
            this.follower.close();
        }
    }

}
