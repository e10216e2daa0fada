package io.slidinglimiter.failover;

import java.util.concurrent.CompletionStage;

/**
 * A failure of a call the server was not answering in time, which it may still answer: whether the
 * server failed is known later. A server that answered other calls meanwhile, or this one soon after,
 * is alive, and the wait was this application's (its threads, its garbage collector, a busy
 * processor) or the queue of calls ahead: a slow call, which trips no breaker.
 */
public interface LateFailure {

    /**
     * Whether the server failed.
     * @return completes with true when it failed (no reply came within a grace period, or the
     * connection was lost), false when the call was only slow
     */
    CompletionStage<Boolean> serverFailed();

}
