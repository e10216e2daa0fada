package io.slidinglimiter.local;

import java.util.Map;

import io.slidinglimiter.internal.CounterKeys;

/**
 * Where a key's counter is kept: the key itself in the map of short keys, or its digest in the
 * other ({@code isDigest}).
 */
record StoredKey(Map<String, WindowCounter> map, String key, boolean isDigest) {

    static StoredKey of(LimitCounters counters, String key) {
        return CounterKeys.fits(key) ? new StoredKey(counters.counters, key, false)
                : new StoredKey(counters.digests, CounterKeys.digest(key), true);
    }

}
