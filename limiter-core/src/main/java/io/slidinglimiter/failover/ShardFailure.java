package io.slidinglimiter.failover;

/**
 * The failure of one shard of a call decided across several, so that only that shard's breaker
 * counts it.
 */
public interface ShardFailure {

    /** @return the failing shard, as {@link RemoteBackend#shardOf} names it */
    String shard();

    /** @return how it failed */
    RuntimeException failure();

}
