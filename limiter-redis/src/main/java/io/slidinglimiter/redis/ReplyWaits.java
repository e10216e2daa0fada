package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

/**
 * How long the runner's callers wait for Redis's replies.
 * <p>
 * How long the runner's callers wait for Redis's replies, and whose fault it is when none comes in
 * time: up to the timeout, on while Redis answers others (a slow JVM, up to {@code maxWait}), once
 * more as long as this JVM's own threads were late, never for a connection known closed
 * ({@link ReplyWatch#nextDeadline}); a timeout is Redis's failure only when nothing came back on the
 * connection and its reply does not come within a grace period.
 */
final class ReplyWaits {

    /** How long after a timeout a reply that did come proves the call slow rather than Redis failed. */
    static final long FAULT_GRACE_MILLIS = 1_000;

    private final long timeoutNanos;

    private final long maxWaitNanos;

    private final ReplyWatch replies;

    private final LettuceConnection connection;

    private final ClusterFollower clusterFollower;

    ReplyWaits(long timeoutNanos, long maxWaitNanos, ReplyWatch replies, LettuceConnection connection,
            ClusterFollower clusterFollower) {
        this.timeoutNanos = timeoutNanos;
        this.maxWaitNanos = maxWaitNanos;
        this.replies = replies;
        this.connection = connection;
        this.clusterFollower = clusterFollower;
    }

    /**
     * A script call's reply as the caller gets it without blocking: failed by the same rules of
     * patience as {@link #await}, with the same late-reply and whose-fault information.
     * @param reply the call's reply
     * @param sentNanos when it was sent
     * @param node the node it went to
     * @return the reply, or its timeout
     */
    CompletableFuture<List<Long>> watch(CompletableFuture<List<Long>> reply, long sentNanos, String node) {
        CompletableFuture<List<Long>> result = new CompletableFuture<>();
        reply.whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            }
            else {
                result.completeExceptionally(failure(RedisBackendException.causeOf(failure)));
            }
        });
        if (!result.isDone()) {
            checkLater(result, reply, sentNanos, sentNanos + this.timeoutNanos, node, false);
        }
        return result;
    }

    /**
     * At {@code deadlineNanos}: fails a call still unanswered, unless it is worth waiting for longer
     * ({@link #nextDeadline}).
     */
    private void checkLater(CompletableFuture<List<Long>> result, CompletableFuture<List<Long>> reply, long sentNanos,
            long deadlineNanos, String node, boolean extended) {
        CompletableFuture.delayedExecutor(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
                .execute(() -> {
                    if (result.isDone()) {
                        return;
                    }
                    long now = System.nanoTime();
                    long next = nextDeadline(node, sentNanos, sentNanos, deadlineNanos, now, extended);
                    if (next != ReplyWatch.GIVE_UP) {
                        checkLater(result, reply, sentNanos, next, node, true);
                    }
                    else {
                        result.completeExceptionally(timeout(reply, sentNanos, node));
                    }
                });
    }

    /**
     * When a call unanswered at {@code nowNanos} looks again, or {@link ReplyWatch#GIVE_UP}: at once
     * on a connection known closed (an outage, not a late reply); else by {@link ReplyWatch#nextDeadline}.
     */
    private long nextDeadline(String node, long startNanos, long sentNanos, long deadlineNanos, long nowNanos,
            boolean extended) {
        if (!this.connection.isOpen()) {
            return ReplyWatch.GIVE_UP;
        }
        return this.replies.nextDeadline(node, startNanos, sentNanos, deadlineNanos, nowNanos, extended);
    }

    /**
     * The connection's commands, waiting for it to open up to {@code maxWait}: opening it on a cold
     * JVM (loading the client's classes, starting its I/O threads) can take longer than a decision's
     * timeout, and a Redis that refuses the connection fails it at once.
     */
    RedisClusterAsyncCommands<byte[], byte[]> awaitConnection() {
        try {
            return get(this.connection.get(), this.maxWaitNanos).commands();
        }
        catch (TimeoutException ex) {
            throw new RedisBackendException("Could not connect to Redis within "
                    + Duration.ofNanos(this.maxWaitNanos).toMillis() + " ms (limiter.redis.max-wait)", ex);
        }
    }

    /**
     * Waits for a reply: up to the timeout, and on while that is worth it ({@link ReplyWatch#nextDeadline}),
     * up to {@code maxWait} since the call started (and at least the timeout since the command was
     * sent). A reply that arrived while the waiting thread was not running is used, however late the
     * thread woke.
     */
    <T> T await(CompletableFuture<T> reply, long startNanos, long sentNanos, String node) {
        long deadline = sentNanos + this.timeoutNanos;
        boolean extended = false;
        while (true) {
            try {
                return get(reply, Math.max(0, deadline - System.nanoTime()));
            }
            catch (TimeoutException ex) {
                long now = System.nanoTime();
                if (reply.isDone()) {
                    // The reply came while this thread was not running: Redis was in time, this JVM was not.
                    deadline = now;
                    continue;
                }
                long next = nextDeadline(node, startNanos, sentNanos, deadline, now, extended);
                if (next == ReplyWatch.GIVE_UP) {
                    throw timeout(reply, sentNanos, node);
                }
                deadline = next;
                extended = true;
            }
        }
    }

    /**
     * A future's value within a wait, its failures as this runner's exceptions; a wait that ends
     * first is left to the caller.
     */
    private static <T> T get(Future<T> future, long waitNanos) throws TimeoutException {
        try {
            return future.get(waitNanos, TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw failure(ex);
        }
        catch (CancellationException ex) {
            throw cancelled(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisBackendException("Interrupted while waiting for Redis", ex);
        }
    }

    /** A command the client cancelled: its connection was closed (to open a new one) before Redis answered. */
    private static RedisBackendException cancelled(CancellationException ex) {
        return new RedisBackendException("Redis did not answer before the connection was closed", ex);
    }

    /**
     * A timeout, and whose fault it was. Redis answered others since this command was sent: slow.
     * The connection is closed: Redis failed. Otherwise nothing came back at all, which a starved
     * client I/O thread or a paused JVM can cause as well as a stalled Redis: the reply gets
     * {@link #FAULT_GRACE_MILLIS} more to come, and only then is Redis said to have failed.
     */
    @SuppressWarnings("unchecked")
    private RedisTimeoutException timeout(Future<?> reply, long sentNanos, String node) {
        CompletableFuture<?> pending = (reply instanceof CompletableFuture<?> future) ? future
                : new CompletableFuture<>();
        CompletionStage<List<Long>> late = (CompletionStage<List<Long>>) pending;
        if (this.replies.answeredSince(node, sentNanos)) {
            return RedisTimeoutException.slow("Redis answered other commands but not this one within "
                    + Duration.ofNanos(this.maxWaitNanos).toMillis() + " ms (limiter.redis.max-wait)", late);
        }
        this.replies.gaveUpOnSilence(node);
        CompletableFuture<Boolean> failed = new CompletableFuture<>();
        if (!this.connection.isOpen()) {
            failed.complete(true);
        }
        else {
            pending.whenComplete((value, failure) -> failed.complete(failure != null && !ReplyWatch.isReply(failure)));
            failed.completeOnTimeout(true, FAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        }
        if (!node.isEmpty()) {
            failed.thenAccept((redisFailed) -> {
                StatefulRedisClusterConnection<byte[], byte[]> cluster = this.connection.cluster();
                if (redisFailed && cluster != null) {
                    this.clusterFollower.suspect(cluster, node, sentNanos);
                }
            });
        }
        return new RedisTimeoutException("Redis did not answer within " + Duration.ofNanos(this.timeoutNanos).toMillis()
                + " ms (limiter.redis.timeout)", late, failed);
    }

    private static RuntimeException failure(ExecutionException ex) {
        return failure(ex.getCause());
    }

    static RuntimeException failure(Throwable cause) {
        if (cause instanceof RedisNoScriptException noScript) {
            return noScript;
        }
        if (cause instanceof CancellationException cancelled) {
            return cancelled(cancelled);
        }
        if (cause instanceof RedisBackendException backend) {
            return backend;
        }
        return new RedisBackendException("Redis failed: " + cause.getMessage(), cause);
    }

}
