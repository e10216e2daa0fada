package io.slidinglimiter.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;

/**
 * What the runner knows of Redis's replies: when each node last answered anything, Redis's clock
 * as the last script reply showed it, and from those whether a late call is worth waiting for
 * longer (Redis is answering, or this application is too busy to read its replies on time).
 */
final class ReplyWatch {

    private final long timeoutNanos;

    private final long maxWaitNanos;

    /** A waiting thread that wakes later than this after its deadline was kept from running: the JVM is busy. */
    private final long lateWakeNanos;

    /** Tells whether the processors are saturated, which makes a late reply this application's. */
    private final ProcessorLoad processorLoad = new ProcessorLoad();

    /**
     * {@link System#nanoTime()} of the last reply from each Redis node, an error reply included: by
     * Cluster node id, {@code ""} for a standalone or Sentinel master and for commands of no key.
     */
    private final Map<String, LastReply> lastReplies = new ConcurrentHashMap<>();

    /** Redis's time minus this JVM's monotonic milliseconds, from the last script reply; unknown until one. */
    private volatile long redisOffsetMillis;

    private volatile boolean redisOffsetKnown;

    ReplyWatch(long timeoutNanos, long maxWaitNanos) {
        this.timeoutNanos = timeoutNanos;
        this.maxWaitNanos = maxWaitNanos;
        this.lateWakeNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5), timeoutNanos / 4);
    }

    /**
     * The command's future, noting when its node replied (an error reply is a reply) and, from a
     * script that read Redis's clock, that clock.
     */
    <T> CompletableFuture<T> replied(RedisFuture<T> command, boolean redisTime, String node) {
        CompletableFuture<T> future = command.toCompletableFuture();
        LastReply lastReply = this.lastReplies.computeIfAbsent(node, (ignored) -> new LastReply());
        future.whenComplete((reply, failure) -> {
            if (failure == null || isReply(failure)) {
                lastReply.nanos = System.nanoTime();
                if (redisTime && reply instanceof List<?> values) {
                    notedRedisTime(values);
                }
            }
        });
        return future;
    }

    /**
     * Notes Redis's clock from a decision's reply (its second value) when the script read it: a
     * reply of its own, or its part of a batch's.
     * @param reply the decision's reply
     */
    void notedRedisTime(List<?> reply) {
        if (reply.size() > 1 && reply.get(1) instanceof Long redisMillis) {
            this.redisOffsetMillis = redisMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
            this.redisOffsetKnown = true;
        }
    }

    /**
     * The Redis time after which a call that starts now is no longer waited for.
     * @return Redis milliseconds since the epoch, or -1 while unknown
     */
    long redisDeadlineMillis() {
        if (!this.redisOffsetKnown) {
            return -1;
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() + this.maxWaitNanos) + this.redisOffsetMillis;
    }

    /** Whether a node has replied to anything since a moment ({@link System#nanoTime()}). */
    boolean answeredSince(String node, long sinceNanos) {
        LastReply lastReply = this.lastReplies.get(node);
        return lastReply != null && lastReply.nanos - sinceNanos > 0;
    }

    /**
     * Whether a call whose wait ended at {@code nowNanos} (it was to end at {@code deadlineNanos})
     * is worth waiting for longer, {@code maxWait} allowing: its node answered something since it
     * was sent (Redis is answering: the reply is queued behind others, or read late here), or this
     * application is too busy to read replies on time: the waiting thread itself woke late, or the
     * processors are saturated (the client's I/O thread waits for one like every other thread).
     */
    boolean keepsWaiting(String node, long sentNanos, long deadlineNanos, long nowNanos) {
        return answeredSince(node, sentNanos) || nowNanos - deadlineNanos > this.lateWakeNanos
                || this.processorLoad.mayBeBusy(nowNanos);
    }

    /** The next moment a waiting call looks again: a timeout on, never past {@code maxWait} after its start. */
    long nextDeadline(long startNanos, long nowNanos) {
        long capNanos = startNanos + this.maxWaitNanos;
        long next = nowNanos + this.timeoutNanos;
        return (next - capNanos > 0) ? capNanos : next;
    }

    /** Whether a failure is Redis's answer (an error reply), not a lost connection. */
    static boolean isReply(Throwable failure) {
        return failure instanceof RedisCommandExecutionException
                || failure.getCause() instanceof RedisCommandExecutionException;
    }

    /** When a node last replied. */
    private static final class LastReply {

        volatile long nanos = System.nanoTime() - Long.MAX_VALUE / 2;

    }

}
