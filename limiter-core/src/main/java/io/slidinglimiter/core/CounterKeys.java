package io.slidinglimiter.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Counter keys as backends store them: a key of more than {@value #MAX_KEY_BYTES} UTF-8 bytes is
 * replaced by {@code sha256:} and the URL-safe Base64 of its SHA-256 digest (50 characters), so
 * that a caller-controlled key cannot make one counter large. Keys that already start with
 * {@code sha256:} are hashed too, so no short key can pose as the digest of a long one.
 */
public final class CounterKeys {

    /** The longest key, in UTF-8 bytes, kept as it is. */
    public static final int MAX_KEY_BYTES = 200;

    static final String DIGEST_PREFIX = "sha256:";

    private CounterKeys() {
    }

    /**
     * The key as stored.
     * @param key a counter key
     * @return the key itself, or its digest form when it is long or looks like a digest
     */
    public static String bounded(String key) {
        return (fits(key) && !key.startsWith(DIGEST_PREFIX)) ? key : digest(key);
    }

    /**
     * Whether a key is short enough to be stored as it is.
     * @param key a counter key
     * @return whether it has at most {@value #MAX_KEY_BYTES} UTF-8 bytes
     */
    public static boolean fits(String key) {
        // A char is at most 3 UTF-8 bytes, so short strings need no encoding to know they fit.
        return key.length() * 3 <= MAX_KEY_BYTES || key.getBytes(StandardCharsets.UTF_8).length <= MAX_KEY_BYTES;
    }

    /**
     * The digest form of a key: {@code sha256:} and the URL-safe Base64 of its SHA-256 digest.
     * @param key a counter key
     * @return its digest form, 50 characters
     */
    public static String digest(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return DIGEST_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("Every Java platform has SHA-256", ex);
        }
    }

}
