package io.slidinglimiter.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;

/**
 * What the runner knows of Redis's replies.
 * <p>
 * When each node last answered anything, Redis's clock
 * as the last script reply showed it, and from those how long a late call is worth waiting for
 * (Redis is answering, or this application's own threads run late).
 */
final class ReplyWatch {

    private final long timeoutNanos;

    private final long maxWaitNanos;

    /** What {@link #nextDeadline} answers when a call is waited for no longer. */
    static final long GIVE_UP = Long.MIN_VALUE;

    /**
     * {@link System#nanoTime()} of the last reply from each Redis node, an error reply included: by
     * Cluster node id, {@code ""} for a standalone or Sentinel master and for commands of no key.
     */
    private final Map<String, LastReply> lastReplies = new ConcurrentHashMap<>();

    /**
     * Redis's time minus this JVM's monotonic milliseconds, the largest a script reply showed within
     * the last second ({@link #notedRedisTime}); unknown until one.
     */
    private volatile long redisOffsetMillis;

    private volatile boolean redisOffsetKnown;

    /** When the offset was noted ({@link System#nanoTime()}). */
    private volatile long redisOffsetNotedNanos;

    /** How long the largest offset seen stands against smaller ones: a second. */
    private static final long OFFSET_KEPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** How late a waiting thread last woke after its deadline, with nothing come back ({@link #nextDeadline}). */
    private volatile long latenessNanos;

    ReplyWatch(long timeoutNanos, long maxWaitNanos) {
        this.timeoutNanos = timeoutNanos;
        this.maxWaitNanos = maxWaitNanos;
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
            long nowNanos = System.nanoTime();
            long offset = redisMillis - TimeUnit.NANOSECONDS.toMillis(nowNanos);
            // A reply read late (a busy JVM) shows Redis's clock behind by as long: the largest offset
            // of the last second is the truest. Older ones give way, so that a clock that stepped back
            // (a promoted replica on another host) is followed within a second.
            if (!this.redisOffsetKnown || offset >= this.redisOffsetMillis
                    || nowNanos - this.redisOffsetNotedNanos > OFFSET_KEPT_NANOS) {
                this.redisOffsetMillis = offset;
                this.redisOffsetNotedNanos = nowNanos;
                this.redisOffsetKnown = true;
            }
        }
    }

    /**
     * The Redis time after which a call to a node that starts now is no longer waited for. While the
     * node answers, a caller may wait up to {@code maxWait} (Redis answering others); once a call to it
     * went unanswered and nothing came back since, its callers give up after the timeout and once as
     * long as their own threads were late ({@link #nextDeadline}), so a script that reaches the node
     * later than twice the timeout (or the timeout plus the lateness last seen, if longer) changes
     * nothing: a node that wakes from a stall does not count what nobody waits for any more.
     * @param node the node the call goes to
     * @return Redis milliseconds since the epoch, or -1 while unknown
     */
    long redisDeadlineMillis(String node) {
        if (!this.redisOffsetKnown) {
            return -1;
        }
        LastReply lastReply = this.lastReplies.get(node);
        long waitNanos = this.maxWaitNanos;
        if (lastReply != null && lastReply.gaveUpNanos - lastReply.nanos > 0) {
            waitNanos = Math.min(waitNanos, this.timeoutNanos + Math.max(this.timeoutNanos, this.latenessNanos));
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() + waitNanos) + this.redisOffsetMillis;
    }

    /**
     * Notes that a call to a node was given up with nothing come back from it since it was sent: until
     * the node answers again, calls to it carry the short deadline of {@link #redisDeadlineMillis}.
     * @param node the node
     */
    void gaveUpOnSilence(String node) {
        LastReply lastReply = this.lastReplies.get(node);
        if (lastReply != null) {
            lastReply.gaveUpNanos = System.nanoTime();
        }
    }

    /** Whether a node has replied to anything since a moment ({@link System#nanoTime()}). */
    boolean answeredSince(String node, long sinceNanos) {
        LastReply lastReply = this.lastReplies.get(node);
        return lastReply != null && lastReply.nanos - sinceNanos > 0;
    }

    /**
     * When a call whose wait ended at {@code nowNanos}, unanswered, looks again; or {@link #GIVE_UP}.
     * <ul>
     * <li>Its node answered something since it was sent: Redis is answering, and the reply is queued
     * behind others or read late by this busy application. It waits on, a timeout at a time, up to
     * {@code maxWait} since it started.</li>
     * <li>Otherwise, once, as long again as this thread was late: the thread that watches the call
     * woke {@code nowNanos - deadlineNanos} after its deadline, and the client's I/O thread, kept
     * from running as long, gets that time to read a reply that may have come. So a call waits the
     * timeout plus the lateness this JVM's own threads show, never a flat {@code maxWait}: the load
     * other processes put on the host does not keep it waiting for a Redis that is silent.</li>
     * </ul>
     * A connection known closed is Redis's failure at once: the caller checks that before asking.
     * @param node the node the call went to
     * @param startNanos when the call started
     * @param sentNanos when it was sent
     * @param deadlineNanos when its wait was to end
     * @param nowNanos when the waiting thread woke, unanswered
     * @param extended whether its one extension for lateness was given already
     * @return the next deadline ({@link System#nanoTime()}), or {@link #GIVE_UP}
     */
    long nextDeadline(String node, long startNanos, long sentNanos, long deadlineNanos, long nowNanos,
            boolean extended) {
        long capNanos = startNanos + this.maxWaitNanos;
        if (nowNanos - capNanos >= 0) {
            return GIVE_UP;
        }
        long next;
        if (answeredSince(node, sentNanos)) {
            next = nowNanos + this.timeoutNanos;
        }
        else if (!extended && nowNanos - deadlineNanos > 0) {
            this.latenessNanos = nowNanos - deadlineNanos;
            next = nowNanos + this.latenessNanos;
        }
        else {
            return GIVE_UP;
        }
        next = (next - capNanos > 0) ? capNanos : next;
        return (next == GIVE_UP) ? next + 1 : next;
    }

    /** Whether a failure is Redis's answer (an error reply), not a lost connection. */
    static boolean isReply(Throwable failure) {
        return failure instanceof RedisCommandExecutionException
                || failure.getCause() instanceof RedisCommandExecutionException;
    }

    /** When a node last replied, and when a call to it was last given up with nothing come back. */
    private static final class LastReply {

        volatile long nanos = System.nanoTime() - Long.MAX_VALUE / 2;

        volatile long gaveUpNanos = this.nanos;

    }

}
