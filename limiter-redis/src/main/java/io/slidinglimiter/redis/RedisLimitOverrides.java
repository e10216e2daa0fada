package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import io.lettuce.core.ScriptOutputType;

import io.slidinglimiter.core.SharedLimitChanges;

/**
 * Limits changed at run time, kept in Redis so that every instance applies them: one hash,
 * {@code <prefix>:limits}, of limit name to {@code "<limit>:<configured limit>"}. The configured
 * limit is the one the instance that made the change was started with: an instance applies a stored
 * change only while its own configuration says the same, so a change outlives restarts and rolling
 * deploys of the same configuration, and a new configured value wins. Every wait is bounded by the
 * runner's timeout.
 */
public final class RedisLimitOverrides implements SharedLimitChanges {

    /** Deletes a field only if it still holds the value read: another instance may have changed it. */
    private static final String REMOVE_IF_UNCHANGED = "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then"
            + " return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0";

    private final LettuceScriptRunner runner;

    private final byte[] key;

    /**
     * Creates the store.
     * @param runner the limiter's bounded connection to Redis
     * @param prefix the limiter's key prefix
     */
    public RedisLimitOverrides(LettuceScriptRunner runner, String prefix) {
        this.runner = runner;
        this.key = bytes(prefix + ":limits");
    }

    @Override
    public String serverName() {
        return "Redis";
    }

    /**
     * Stores a limit for every instance started with the same configured limit.
     * @param limitName the limit's name
     * @param limit its new permits per window
     * @param configuredLimit the permits per window this instance was configured with
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    @Override
    public void store(String limitName, long limit, long configuredLimit) {
        this.runner.call((commands) -> commands.hset(this.key, bytes(limitName), bytes(Stored.format(limit, configuredLimit))));
    }

    /**
     * Ends a run-time change on every instance.
     * @param limitName the limit's name
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    @Override
    public void remove(String limitName) {
        this.runner.call((commands) -> commands.hdel(this.key, bytes(limitName)));
    }

    /**
     * Removes a change made under another configuration, unless it changed since it was read.
     * @param limitName the limit's name
     * @param read the change as read
     */
    @Override
    public void removeStale(String limitName, Stored read) {
        this.runner.call((commands) -> commands.<Long>eval(REMOVE_IF_UNCHANGED, ScriptOutputType.INTEGER,
                new byte[][] { this.key }, bytes(limitName), bytes(read.stored())));
    }

    /**
     * Every stored change.
     * @return by limit name; a value this version cannot read counts as made under another configuration
     * @throws RedisBackendException when Redis fails or does not answer in time
     */
    @Override
    public Map<String, Stored> load() {
        Map<byte[], byte[]> stored = this.runner.call((commands) -> commands.hgetall(this.key));
        Map<String, Stored> overrides = new HashMap<>();
        if (stored != null) {
            stored.forEach((name, value) -> overrides.put(new String(name, StandardCharsets.UTF_8),
                    Stored.parse(new String(value, StandardCharsets.UTF_8))));
        }
        return overrides;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

}
