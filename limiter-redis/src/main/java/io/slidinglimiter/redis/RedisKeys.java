package io.slidinglimiter.redis;

import io.slidinglimiter.internal.CounterKeys;

/**
 * Redis keys of counters: {@code <prefix>:{<key>}:<limit>}. The user's key is the hash tag, so
 * every limit of one key lands in one Cluster slot; it is escaped ({@code \} as {@code \\},
 * {@code {} as {@code \(}, {@code }} as {@code \)}) so that no key text can end the tag early or
 * reach into the namespace, and keys over {@value CounterKeys#MAX_KEY_BYTES} bytes are hashed first.
 * Keys are encoded by {@link CounterKeys#bytes}, so keys that differ only in unpaired surrogates stay
 * apart.
 */
public final class RedisKeys {

    private final String prefix;

    /** The prefix as the key's first bytes. */
    private final byte[] prefixBytes;

    /**
     * Creates the key scheme.
     * @param prefix the namespace, without braces
     */
    public RedisKeys(String prefix) {
        if (prefix == null || prefix.isBlank() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("The key prefix must be non-blank and hold no braces, but was '"
                    + prefix + "'");
        }
        this.prefix = prefix;
        this.prefixBytes = CounterKeys.bytes(prefix);
    }

    /**
     * The {@code SCAN MATCH} pattern of every counter under the prefix, and of nothing else there
     * (the run-time limits' hash has no brace): the prefix with its glob characters escaped, a
     * colon, the opening brace of the hash tag, and a star.
     * @return the pattern's UTF-8 bytes
     */
    public byte[] counterPattern() {
        StringBuilder pattern = new StringBuilder();
        for (int i = 0; i < this.prefix.length(); i++) {
            char c = this.prefix.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                pattern.append('\\');
            }
            pattern.append(c);
        }
        return CounterKeys.bytes(pattern.append(":{*").toString());
    }

    /**
     * The Redis key of one counter.
     * @param limitName the limit's name
     * @param key the counter key
     * @return the key's UTF-8 bytes
     */
    public byte[] counterKey(String limitName, String key) {
        String bounded = CounterKeys.bounded(key);
        // Written straight into the bytes: no builder, no string of the whole key.
        byte[] tag = CounterKeys.bytes(needsEscape(bounded) ? escaped(bounded) : bounded);
        byte[] name = CounterKeys.bytes(limitName);
        byte[] redisKey = new byte[this.prefixBytes.length + 2 + tag.length + 2 + name.length];
        System.arraycopy(this.prefixBytes, 0, redisKey, 0, this.prefixBytes.length);
        int at = this.prefixBytes.length;
        redisKey[at++] = ':';
        redisKey[at++] = '{';
        System.arraycopy(tag, 0, redisKey, at, tag.length);
        at += tag.length;
        redisKey[at++] = '}';
        redisKey[at++] = ':';
        System.arraycopy(name, 0, redisKey, at, name.length);
        return redisKey;
    }

    /** A key with its backslashes and braces escaped, so that no brace of it ends the hash tag. */
    private static String escaped(String key) {
        StringBuilder escaped = new StringBuilder(key.length() + 8);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '\\' -> escaped.append("\\\\");
                case '{' -> escaped.append("\\(");
                case '}' -> escaped.append("\\)");
                default -> escaped.append(c);
            }
        }
        return escaped.toString();
    }

    /** Whether a key holds a character that the hash tag escapes: a backslash or a brace. */
    private static boolean needsEscape(String key) {
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == '\\' || c == '{' || c == '}') {
                return true;
            }
        }
        return false;
    }

}
