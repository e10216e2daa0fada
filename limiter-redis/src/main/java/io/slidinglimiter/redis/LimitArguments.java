package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.LimitDefinition;

/**
 * The script's arguments of a limit's definition, encoded once per definition instead of once per call.
 * <p>
 * A few definitions are in force at a time, each one instance: they are found by identity in a small
 * table, and one that is not there is encoded again (a table slot shared by two definitions costs
 * only that).
 */
final class LimitArguments {

    /** Slots of the table: a power of two. */
    private static final int SLOTS = 64;

    private static final AtomicReferenceArray<Encoded> TABLE = new AtomicReferenceArray<>(SLOTS);

    private LimitArguments() {
    }

    /**
     * A limit's algorithm, window, sub-windows and permits, as the script reads them.
     * @param limit the definition, one the script can count exactly
     * @return its four arguments; never changed by the caller
     */
    static byte[][] of(LimitDefinition limit) {
        int slot = System.identityHashCode(limit) & (SLOTS - 1);
        Encoded encoded = TABLE.get(slot);
        if (encoded == null || encoded.limit != limit) {
            encoded = new Encoded(limit, new byte[][] { ascii((limit.algorithm() == Algorithm.SLIDING_LOG) ? 1 : 0),
                    ascii(limit.windowMillis()), ascii(limit.subWindows()), ascii(limit.limit()) });
            TABLE.set(slot, encoded);
        }
        return encoded.arguments;
    }

    private static byte[] ascii(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private record Encoded(LimitDefinition limit, byte[][] arguments) {
    }

}
