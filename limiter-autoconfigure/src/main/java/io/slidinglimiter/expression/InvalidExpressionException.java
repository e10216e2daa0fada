package io.slidinglimiter.expression;

/**
 * An expression that does not parse, or refers to a variable or bean that will not exist.
 */
public class InvalidExpressionException extends IllegalArgumentException {

    InvalidExpressionException(String message) {
        super(message);
    }

}
