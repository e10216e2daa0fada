package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Limits changed at run time, kept in Redis so that every instance applies them: one hash,
 * {@code <prefix>:limits}, of limit name to permits per window. Instances read it on a schedule;
 * a change therefore reaches the instance that made it at once and the others within one period.
 */
public final class RedisLimitOverrides {

    private final RedisConnectionFactory connectionFactory;

    private final byte[] key;

    /**
     * Creates the store.
     * @param connectionFactory the application's connection factory
     * @param prefix the limiter's key prefix
     */
    public RedisLimitOverrides(RedisConnectionFactory connectionFactory, String prefix) {
        this.connectionFactory = connectionFactory;
        this.key = (prefix + ":limits").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Stores a limit for every instance.
     * @param limitName the limit's name
     * @param limit its new permits per window
     */
    public void store(String limitName, long limit) {
        try (RedisConnection connection = this.connectionFactory.getConnection()) {
            connection.hashCommands().hSet(this.key, limitName.getBytes(StandardCharsets.UTF_8),
                    Long.toString(limit).getBytes(StandardCharsets.UTF_8));
        }
    }

    /**
     * Every stored limit.
     * @return limit name to permits per window
     */
    public Map<String, Long> load() {
        Map<String, Long> limits = new HashMap<>();
        try (RedisConnection connection = this.connectionFactory.getConnection()) {
            Map<byte[], byte[]> stored = connection.hashCommands().hGetAll(this.key);
            if (stored != null) {
                stored.forEach((name, limit) -> limits.put(new String(name, StandardCharsets.UTF_8),
                        Long.parseLong(new String(limit, StandardCharsets.UTF_8))));
            }
        }
        return limits;
    }

}
