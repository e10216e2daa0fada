package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The numbers the script is sent are their decimal digits, whatever their size (seeded random values). */
class ScriptMessagesTests {

    @Test
    void aNumberIsItsDecimalDigits() {
        long seed = 20261206L;
        Random random = new Random(seed);
        long[] edges = { 0, 1, 9, 10, 99, 100, 999_999_999_999L, Long.MAX_VALUE, -1, Long.MIN_VALUE };
        for (long value : edges) {
            assertThat(ScriptMessages.bytes(value)).as("%d", value)
                    .isEqualTo(Long.toString(value).getBytes(StandardCharsets.US_ASCII));
        }
        for (int run = 0; run < 100_000; run++) {
            long value = random.nextLong() >>> random.nextInt(64);
            assertThat(ScriptMessages.bytes(value)).as("seed %d: %d", seed, value)
                    .isEqualTo(Long.toString(value).getBytes(StandardCharsets.US_ASCII));
        }
    }

}
