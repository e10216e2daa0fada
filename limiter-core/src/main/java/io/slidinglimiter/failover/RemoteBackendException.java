package io.slidinglimiter.failover;

import java.util.concurrent.CompletionException;

/**
 * A remote backend's server could not do what was asked: unreachable, too slow, or failing the call.
 * <p>
 * Each backend throws its own kind ({@code RedisBackendException}, {@code JdbcBackendException});
 * callers that serve every backend alike (the endpoint's 503) catch this one.
 */
public class RemoteBackendException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     * @param message what went wrong, naming the server
     * @param cause the client's failure, or null
     */
    public RemoteBackendException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * The failure an asynchronous stage carries, unwrapped from the {@link CompletionException} a
     * dependent stage wraps it in.
     * @param failure a stage's failure
     * @return the failure itself
     */
    public static Throwable causeOf(Throwable failure) {
        return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
    }

    /**
     * The failure of an asynchronous call as the synchronous call would throw it.
     * @param failure a stage's failure
     * @return its cause when the stage wrapped it, as a runtime exception (this kind around any other)
     */
    public static RuntimeException thrown(Throwable failure) {
        Throwable cause = causeOf(failure);
        return (cause instanceof RuntimeException runtime) ? runtime
                : new RemoteBackendException("The server failed: " + cause.getMessage(), cause);
    }

}
