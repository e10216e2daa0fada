package io.slidinglimiter.core;

import java.time.Duration;
import java.util.Objects;

import io.slidinglimiter.core.InvalidLimitException.Field;

/**
 * A named limit: {@code limit} permits per {@code window}, counted in {@code subWindows} slots by
 * {@code algorithm}. Immutable and validated on construction; a change of limit at run time is a
 * new definition with the same name ({@link #withLimit(long)}), which keeps the counts.
 * <pre>{@code
 * LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);
 * }</pre>
 *
 * @param name the limit's name; counters are shared by every definition of the same name
 * @param limit permits per window, greater than zero
 * @param window the window length, a positive whole number of milliseconds
 * @param subWindows the number of slots the window is cut into, 1 to 3600; the window must divide
 * into that many whole milliseconds
 * @param algorithm the counting algorithm
 */
public record LimitDefinition(String name, long limit, Duration window, int subWindows, Algorithm algorithm) {

    /** The largest number of sub-windows a window may be cut into. */
    public static final int MAX_SUB_WINDOWS = 3600;

    /** The longest window: a year and a day, far from any overflow of epoch-millisecond arithmetic. */
    public static final Duration MAX_WINDOW = Duration.ofDays(366);

    /**
     * Checks every value.
     * @param name the limit's name
     * @param limit permits per window, greater than zero
     * @param window the window length
     * @param subWindows the number of slots, 1 to 3600
     * @param algorithm the counting algorithm
     * @throws InvalidLimitException naming the value that is wrong
     */
    public LimitDefinition {
        if (name == null || name.isBlank()) {
            throw new InvalidLimitException(Field.NAME, "A limit needs a name, but it was " + (name == null ? "null" : "blank"));
        }
        Objects.requireNonNull(algorithm, () -> "Limit '" + name + "': algorithm must not be null");
        if (limit <= 0) {
            throw new InvalidLimitException(Field.LIMIT, "Limit '" + name + "': limit must be greater than 0 but was " + limit);
        }
        Objects.requireNonNull(window, () -> "Limit '" + name + "': window must not be null");
        checkGeometry("Limit '" + name + "'", window, subWindows);
    }

    /**
     * A sliding-window-counter definition.
     * @param name the limit's name
     * @param limit permits per window
     * @param window the window length
     * @param subWindows the number of slots
     * @return the definition
     */
    public static LimitDefinition of(String name, long limit, Duration window, int subWindows) {
        return new LimitDefinition(name, limit, window, subWindows, Algorithm.SLIDING_WINDOW_COUNTER);
    }

    /**
     * The window length in milliseconds.
     * @return the window in milliseconds
     */
    public long windowMillis() {
        return this.window.toMillis();
    }

    /**
     * The same definition with another limit; counters of this name keep their counts.
     * @param newLimit the new permits per window
     * @return the new definition
     */
    public LimitDefinition withLimit(long newLimit) {
        return new LimitDefinition(this.name, newLimit, this.window, this.subWindows, this.algorithm);
    }

    static void checkGeometry(String subject, Duration window, int subWindows) {
        if (window.isNegative() || window.isZero()) {
            throw new InvalidLimitException(Field.WINDOW, subject + ": window must be positive but was " + window);
        }
        if (window.compareTo(MAX_WINDOW) > 0) {
            throw new InvalidLimitException(Field.WINDOW, subject + ": window " + window
                    + " is longer than the longest supported, " + MAX_WINDOW.toDays() + " days");
        }
        if (window.toNanosPart() % 1_000_000 != 0) {
            throw new InvalidLimitException(Field.WINDOW,
                    subject + ": window " + window + " is not a whole number of milliseconds");
        }
        checkGeometry(subject, window.toMillis(), subWindows);
    }

    /**
     * Refuses a window and sub-windows that no counter can keep: a window not positive or longer
     * than {@link #MAX_WINDOW}, sub-windows out of range or not cutting the window into whole
     * milliseconds.
     * @param subject what the geometry is of, for the message
     * @param windowMillis the window
     * @param subWindows the sub-windows
     * @throws InvalidLimitException naming the field at fault
     */
    public static void checkGeometry(String subject, long windowMillis, int subWindows) {
        if (windowMillis <= 0) {
            throw new InvalidLimitException(Field.WINDOW,
                    subject + ": window must be positive but was " + windowMillis + "ms");
        }
        if (windowMillis > MAX_WINDOW.toMillis()) {
            throw new InvalidLimitException(Field.WINDOW, subject + ": window " + windowMillis
                    + "ms is longer than the longest supported, " + MAX_WINDOW.toDays() + " days");
        }
        if (subWindows < 1 || subWindows > MAX_SUB_WINDOWS) {
            throw new InvalidLimitException(Field.SUB_WINDOWS, subject + ": sub-windows must be between 1 and "
                    + MAX_SUB_WINDOWS + " but was " + subWindows);
        }
        if (windowMillis % subWindows != 0) {
            throw new InvalidLimitException(Field.WINDOW, subject + ": window " + windowMillis
                    + "ms cannot be cut into " + subWindows + " sub-windows of whole milliseconds: use a window"
                    + " that is a multiple of " + subWindows + "ms or another number of sub-windows");
        }
    }

}
