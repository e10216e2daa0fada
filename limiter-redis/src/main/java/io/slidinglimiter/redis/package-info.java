/**
 * The Redis backend: counters shared by every instance, one script run per decision.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.redis.LettuceScriptRunner} (the connection, on a Spring Data
 * Redis connection factory or a plain Lettuce client), {@link io.slidinglimiter.redis.RedisBackend}
 * (the counters), {@link io.slidinglimiter.redis.ResilientRedisBackend} (what applications use: the
 * failure policy, breakers, denial cache, leases), {@link io.slidinglimiter.redis.RedisStatus} (what it
 * tells of itself), {@code RedisKeys}, {@code RedisLimitOverrides}, {@code SentinelFollower} and the exceptions.
 * Everything else is package-private.
 * <p>
 * <b>Rooms.</b> A decision walks down and never back: {@code ResilientRedisBackend} (the core's failover
 * and its {@code Leases}, which take and give back through {@code RedisBackend}'s lease operations)
 * to {@code RedisBackend} (keys, slots, refunds) to {@code ScriptMessages} (the script's arguments
 * and reply) and {@code LettuceScriptRunner} ({@code LettuceConnection}, {@code ReplyWatch}).
 * {@code HouseRulesTests} checks that no type reaches back up.
 */
@NullMarked
package io.slidinglimiter.redis;

import org.jspecify.annotations.NullMarked;
