package io.slidinglimiter.aop;

/**
 * A call whose cost expression yielded no number, or a number outside 1 to the limit. In a web
 * request it becomes 400 Bad Request: such costs usually come from request data.
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
