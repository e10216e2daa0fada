package io.slidinglimiter.redis;

import io.slidinglimiter.failover.RemoteBackendException;

/**
 * Redis could not decide: unreachable, too slow, or failing the script.
 */
public class RedisBackendException extends RemoteBackendException {

    /**
     * Creates the exception.
     * @param message what went wrong
     * @param cause the client's failure
     */
    public RedisBackendException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * The failure of an asynchronous call as the synchronous call would throw it.
     * @param failure the stage's failure
     * @return a runtime exception: the failure itself, or a {@code RedisBackendException} around it
     */
    static RuntimeException of(Throwable failure) {
        Throwable cause = causeOf(failure);
        return (cause instanceof RuntimeException runtime) ? runtime
                : new RedisBackendException("Redis failed: " + cause.getMessage(), cause);
    }

}
