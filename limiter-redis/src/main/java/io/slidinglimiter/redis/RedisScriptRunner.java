package io.slidinglimiter.redis;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Runs the limiter's one Lua script ({@link RedisScripts#DECIDE}) against Redis: a single round
 * trip, by {@code EVALSHA}, reloading the script when Redis answers {@code NOSCRIPT}.
 */
@FunctionalInterface
interface RedisScriptRunner {

    /**
     * Runs the script.
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @return its reply: integers
     * @throws RuntimeException when Redis cannot be reached or does not answer in time
     */
    List<Long> run(byte[][] keys, byte[][] args);

    /**
     * Runs the script on a node already known, so that a decision computes its keys' slot once.
     * @param node the node of the keys, as {@link #nodeOf} names it
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @return its reply: integers
     */
    default List<Long> run(String node, byte[][] keys, byte[][] args) {
        return run(keys, args);
    }

    /**
     * Sends the script without waiting for it: for work whose outcome nobody waits for (giving back
     * a decision that Redis applied after its caller stopped waiting).
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @return completes with the reply
     */
    default CompletionStage<List<Long>> runLater(byte[][] keys, byte[][] args) {
        return CompletableFuture.supplyAsync(() -> run(keys, args));
    }

    /**
     * {@link #run} without blocking the calling thread: within the same timeout, failing as
     * {@link #run} would throw. By default it runs {@link #run} on {@code blocking}.
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @param blocking runs work that may block
     * @return completes with the reply, or exceptionally
     */
    default CompletableFuture<List<Long>> runAsync(byte[][] keys, byte[][] args, Executor blocking) {
        return CompletableFuture.supplyAsync(() -> run(keys, args), blocking);
    }

    /**
     * {@link #runAsync} on a node already known.
     * @param node the node of the keys, as {@link #nodeOf} names it
     * @param keys its {@code KEYS}, which share one hash slot
     * @param args its {@code ARGV}
     * @param blocking runs work that may block
     * @return completes with the reply, or exceptionally
     */
    default CompletableFuture<List<Long>> runAsync(String node, byte[][] keys, byte[][] args, Executor blocking) {
        return runAsync(keys, args, blocking);
    }

    /**
     * Deletes every key that matches a pattern, scanning ({@code SCAN}, never {@code KEYS}) every
     * master of a Cluster. By default unsupported.
     * @param pattern a {@code SCAN MATCH} glob
     * @return how many keys were deleted
     * @throws UnsupportedOperationException when the runner cannot
     */
    default long deleteMatching(byte[] pattern) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot delete keys");
    }

    /**
     * The Redis time after which a call to a node that starts now is no longer waited for, so that
     * the script can refuse to change anything later than that.
     * @param node the node of the call's keys, as {@link #nodeOf} names it
     * @return Redis milliseconds since the epoch, or -1 while unknown (nothing refused)
     */
    default long redisDeadlineMillis(String node) {
        return -1;
    }

    /**
     * Whether Redis answers and holds the script. By default true: a runner that cannot tell.
     * @return whether the script is cached
     */
    default boolean isScriptLoaded() {
        return true;
    }

    /**
     * Which Redis node serves a key, so that failures count against that node alone (a shard of a
     * Cluster); every key is on one node otherwise.
     * @param key a key of the script
     * @return the node's id, or {@code ""} when there is one node
     */
    default String nodeOf(byte[] key) {
        return "";
    }

    /**
     * The nodes that serve slots now, as {@link #nodeOf} names them.
     * @return their ids; {@code ""} alone when there is one node
     */
    default Set<String> nodes() {
        return Set.of("");
    }

}
