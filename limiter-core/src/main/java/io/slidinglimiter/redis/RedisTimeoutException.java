package io.slidinglimiter.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Redis did not answer a script within the limiter's timeout. The command was not withdrawn: the
 * reply may still come ({@link #lateReply()}), and a decision that Redis then applied can be given
 * back. Whether this is Redis's failure depends on {@link #isRedisAnswering()}: a Redis that
 * answered other commands meanwhile is alive, and the wait was this application's (its threads,
 * its garbage collector, a busy processor) or the queue of commands ahead.
 */
public class RedisTimeoutException extends RedisBackendException {

    private final transient CompletionStage<List<Long>> lateReply;

    private final boolean redisAnswering;

    /**
     * Creates the exception.
     * @param message what happened
     * @param lateReply completes with the script's reply if it ever comes
     * @param redisAnswering whether Redis answered another command after this one was sent
     */
    public RedisTimeoutException(String message, CompletionStage<List<Long>> lateReply, boolean redisAnswering) {
        super(message, null);
        this.lateReply = lateReply;
        this.redisAnswering = redisAnswering;
    }

    /** @return completes with the script's reply if it comes after all */
    public CompletionStage<List<Long>> lateReply() {
        return this.lateReply;
    }

    /** @return whether Redis answered other commands while this one waited: a slow call, not an outage */
    public boolean isRedisAnswering() {
        return this.redisAnswering;
    }

}
