package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The counter key is {@code <prefix>:{<key>}:<limit>} in UTF-8, the key's backslashes and braces
 * escaped so that it is the whole hash tag: checked over seeded random keys of plain, escaped and
 * non-ASCII characters against the key written out in full.
 */
class RedisKeysTests {

    private static final String ALPHABET = "abcXYZ019-_:.@ {}\\\u00e9\u4e2d\ud83d\ude00";

    @Test
    void everyKeyIsThePrefixItsEscapedTagAndItsLimit() {
        long seed = 20261206L;
        Random random = new Random(seed);
        RedisKeys keys = new RedisKeys("limiter");
        for (int run = 0; run < 10_000; run++) {
            StringBuilder key = new StringBuilder();
            int length = 1 + random.nextInt(12);
            while (key.length() < length) {
                int at = random.nextInt(ALPHABET.length() - 1);
                char c = ALPHABET.charAt(at);
                // The emoji is one code point of two chars: taken whole.
                key.append(Character.isHighSurrogate(c) ? ALPHABET.substring(at, at + 2)
                        : Character.isLowSurrogate(c) ? "x" : String.valueOf(c));
            }
            String name = (run % 2 == 0) ? "api" : "per-user\u00e9";
            String expected = "limiter:{" + key.toString().replace("\\", "\\\\").replace("{", "\\(").replace("}", "\\)")
                    + "}:" + name;
            assertThat(keys.counterKey(name, key.toString())).as("seed %d, run %d: key '%s'", seed, run, key)
                    .isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
        }
    }

}
