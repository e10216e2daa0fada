package io.slidinglimiter.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Counter keys as backends store them.
 * <p>
 * A key of more than {@value #MAX_KEY_BYTES} UTF-8 bytes is
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
     * The key as a text column stores it (PostgreSQL's {@code text}, which holds neither a NUL nor a
     * surrogate without its pair): {@link #bounded}, and the digest form also for a key with either, so
     * that every key has a row of its own and no key fails its statements. The digest is of the key's
     * {@link #bytes}, which tell apart what the database would write as one.
     * @param key a counter key
     * @return the key itself, or its digest form
     */
    public static String inText(String key) {
        return (fits(key) && !key.startsWith(DIGEST_PREFIX) && isText(key)) ? key : digest(key);
    }

    /** Whether a key has no NUL and no surrogate without its pair. */
    private static boolean isText(String key) {
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '\0') {
                return false;
            }
            if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            }
            else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a key is short enough to be stored as it is.
     * @param key a counter key
     * @return whether it has at most {@value #MAX_KEY_BYTES} UTF-8 bytes
     */
    public static boolean fits(String key) {
        // A char is at most 3 UTF-8 bytes, so short strings need no encoding to know they fit.
        return key.length() * 3 <= MAX_KEY_BYTES || bytes(key).length <= MAX_KEY_BYTES;
    }

    /**
     * A key's bytes: UTF-8, except that a surrogate without its pair is encoded on its own, in three
     * bytes (as WTF-8 does), where {@link String#getBytes} would write {@code ?} for it. So distinct
     * keys have distinct bytes: {@code "\uD800"}, {@code "\uD801"} and {@code "?"} stay three keys.
     * Well-formed keys get exactly their UTF-8 bytes.
     * @param key a counter key
     * @return its bytes
     */
    public static byte[] bytes(String key) {
        if (!hasSurrogate(key)) {
            return key.getBytes(StandardCharsets.UTF_8);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(key.length() * 3);
        for (int i = 0; i < key.length(); i++) {
            int codePoint = key.codePointAt(i);
            if (Character.isSupplementaryCodePoint(codePoint)) {
                i++;
            }
            if (codePoint < 0x80) {
                out.write(codePoint);
            }
            else if (codePoint < 0x800) {
                out.write(0xC0 | (codePoint >> 6));
                out.write(0x80 | (codePoint & 0x3F));
            }
            else if (codePoint < 0x10000) {
                // A lone surrogate lands here too, as its own three bytes.
                out.write(0xE0 | (codePoint >> 12));
                out.write(0x80 | ((codePoint >> 6) & 0x3F));
                out.write(0x80 | (codePoint & 0x3F));
            }
            else {
                out.write(0xF0 | (codePoint >> 18));
                out.write(0x80 | ((codePoint >> 12) & 0x3F));
                out.write(0x80 | ((codePoint >> 6) & 0x3F));
                out.write(0x80 | (codePoint & 0x3F));
            }
        }
        return out.toByteArray();
    }

    /**
     * The digest form of a key: {@code sha256:} and the URL-safe Base64 of its SHA-256 digest.
     * @param key a counter key
     * @return its digest form, 50 characters
     */
    public static String digest(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes(key));
            return DIGEST_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("Every Java platform has SHA-256", ex);
        }
    }

    private static boolean hasSurrogate(String key) {
        for (int i = 0; i < key.length(); i++) {
            if (Character.isSurrogate(key.charAt(i))) {
                return true;
            }
        }
        return false;
    }

}
