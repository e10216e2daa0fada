package io.slidinglimiter;

/**
 * A call whose cost no limit could ever admit: below 1, or above its limit's permits per window.
 * <p>
 * Thrown before anything is counted. In a web request it becomes 400 Bad
 * Request, since such costs usually come from request data.
 */
public class InvalidCostException extends IllegalArgumentException {

    /**
     * Creates the exception.
     * @param message what was wrong, naming the limit; never the key
     */
    public InvalidCostException(String message) {
        super(message);
    }

}
