package io.slidinglimiter.autoconfigure;

import org.springframework.util.ClassUtils;

/**
 * Whether the Redis backend can run here: Spring Data Redis with Lettuce on the class path.
 */
final class RedisSupport {

    static final String CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

    static final String LETTUCE = "io.lettuce.core.RedisClient";

    private RedisSupport() {
    }

    static boolean isPresent(ClassLoader classLoader) {
        return ClassUtils.isPresent(CONNECTION_FACTORY, classLoader) && ClassUtils.isPresent(LETTUCE, classLoader);
    }

}
