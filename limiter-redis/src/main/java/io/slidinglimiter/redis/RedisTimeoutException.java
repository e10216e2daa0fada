package io.slidinglimiter.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.slidinglimiter.failover.LateFailure;

/**
 * Redis did not answer a script within the limiter's timeout. The command was not withdrawn: the
 * reply may still come ({@link #lateReply()}), and a decision that Redis then applied can be given
 * back. Whether Redis failed is told by {@link #redisFailed()}: a Redis that answered other
 * commands meanwhile, or this one soon after, is alive, and the wait was this application's (its
 * threads, its garbage collector, a busy processor starving the client's I/O thread) or the queue
 * of commands ahead.
 */
public class RedisTimeoutException extends RedisBackendException implements LateFailure {

    private final transient CompletionStage<List<Long>> lateReply;

    private final transient CompletionStage<Boolean> redisFailed;

    /**
     * Creates the exception.
     * @param message what happened
     * @param lateReply completes with the script's reply if it ever comes
     * @param redisFailed completes with true when Redis itself failed (no reply came within a grace
     * period, or the connection was lost), false when the call was only slow
     */
    public RedisTimeoutException(String message, CompletionStage<List<Long>> lateReply,
            CompletionStage<Boolean> redisFailed) {
        super(message, null);
        this.lateReply = lateReply;
        this.redisFailed = redisFailed;
    }

    /**
     * A timeout while Redis answered other commands: a slow call, decided at once.
     * @param message what happened
     * @param lateReply completes with the script's reply if it ever comes
     * @return the exception
     */
    static RedisTimeoutException slow(String message, CompletionStage<List<Long>> lateReply) {
        return new RedisTimeoutException(message, lateReply, CompletableFuture.completedFuture(false));
    }

    /** @return completes with the script's reply if it comes after all */
    public CompletionStage<List<Long>> lateReply() {
        return this.lateReply;
    }

    /** @return completes with whether Redis failed (true) or the call was only slow (false) */
    public CompletionStage<Boolean> redisFailed() {
        return this.redisFailed;
    }

    /** @return as {@link #redisFailed()} */
    @Override
    public CompletionStage<Boolean> serverFailed() {
        return this.redisFailed;
    }

}
