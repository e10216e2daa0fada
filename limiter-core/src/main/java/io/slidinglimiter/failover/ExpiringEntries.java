package io.slidinglimiter.failover;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * What a remote backend remembers per key between decisions (denials, last usages): a map whose
 * entries end at a time of their own, bounded in size. When it is full, the entries that ended are
 * dropped, and a new one is not kept while it stays full: forgetting is always the safe side.
 *
 * @param <K> the key
 * @param <V> the entry
 */
final class ExpiringEntries<K, V> {

    private final int maxEntries;

    private final ToLongFunction<V> endsAtMillis;

    private final Map<K, V> entries = new ConcurrentHashMap<>();

    /**
     * @param maxEntries the most entries kept
     * @param endsAtMillis when an entry ends
     */
    ExpiringEntries(int maxEntries, ToLongFunction<V> endsAtMillis) {
        this.maxEntries = maxEntries;
        this.endsAtMillis = endsAtMillis;
    }

    V get(K key) {
        return this.entries.get(key);
    }

    /** @return whether no entry is kept: a look-up would find nothing, without making its key */
    boolean isEmpty() {
        return this.entries.isEmpty();
    }

    /** Keeps {@code value} unless the map is full of entries that have not ended by {@code nowMillis}. */
    void put(K key, V value, long nowMillis) {
        if (this.entries.size() >= this.maxEntries) {
            this.entries.values().removeIf((entry) -> this.endsAtMillis.applyAsLong(entry) <= nowMillis);
            if (this.entries.size() >= this.maxEntries) {
                return;
            }
        }
        this.entries.put(key, value);
    }

    V remove(K key) {
        return this.entries.remove(key);
    }

    void remove(K key, V value) {
        this.entries.remove(key, value);
    }

    /** Forgets every entry. */
    void clear() {
        this.entries.clear();
    }

}
