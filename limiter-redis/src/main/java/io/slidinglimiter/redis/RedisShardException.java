package io.slidinglimiter.redis;

import io.slidinglimiter.failover.ShardFailure;

/**
 * One shard of a call decided across Redis Cluster nodes failed.
 * <p>
 * Which, and how (the cause), so
 * that only that shard's breaker counts the failure.
 */
class RedisShardException extends RedisBackendException implements ShardFailure {

    /** The shard that failed. */
    private final String shard;

    /**
     * Creates the exception.
     * @param shard the failing shard, as {@link RedisBackend#shardOf} names it
     * @param cause its failure
     */
    public RedisShardException(String shard, RuntimeException cause) {
        super("Redis shard " + shard + " failed: " + cause.getMessage(), cause);
        this.shard = shard;
    }

    /** @return the failing shard, as {@link RedisBackend#shardOf} names it */
    @Override
    public String shard() {
        return this.shard;
    }

    /** @return how it failed */
    @Override
    public RuntimeException failure() {
        return (RuntimeException) getCause();
    }

}
