package io.slidinglimiter.redis;

/**
 * Redis could not decide: unreachable, too slow, or failing the script.
 */
public class RedisBackendException extends RuntimeException {

    /**
     * Creates the exception.
     * @param message what went wrong
     * @param cause the client's failure
     */
    public RedisBackendException(String message, Throwable cause) {
        super(message, cause);
    }

}
