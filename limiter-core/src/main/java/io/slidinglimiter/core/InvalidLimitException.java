package io.slidinglimiter.core;

/**
 * A limit definition with a bad value. Tells which {@link Field} was wrong, so that a
 * configuration layer can name the property that holds it.
 */
public class InvalidLimitException extends IllegalArgumentException {

    /** The part of a definition that was wrong. */
    public enum Field {

        /** The limit's name. */
        NAME,
        /** The permits per window. */
        LIMIT,
        /** The window length. */
        WINDOW,
        /** The number of sub-windows. */
        SUB_WINDOWS

    }

    /** The value that is wrong. */
    private final Field field;

    InvalidLimitException(Field field, String message) {
        super(message);
        this.field = field;
    }

    /** @return the part of the definition that was wrong */
    public Field getField() {
        return this.field;
    }

}
