package io.slidinglimiter.redis;

import java.util.List;

/**
 * Runs the limiter's one Lua script ({@link RedisScripts#DECIDE}) against Redis: a single round
 * trip, by {@code EVALSHA}, reloading the script when Redis answers {@code NOSCRIPT}.
 */
@FunctionalInterface
public interface RedisScriptRunner {

    /**
     * Runs the script.
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @return its reply: integers
     * @throws RuntimeException when Redis cannot be reached or does not answer in time
     */
    List<Long> run(byte[][] keys, byte[][] args);

}
