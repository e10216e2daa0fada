package io.slidinglimiter.failover;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;

/**
 * Keys that the server reported out of permits until some time, answered locally until then without a
 * round trip. Exact: a counter whose next permit frees at {@code T} cannot admit any call before
 * {@code T}. An entry is kept only for a rejection of a call of cost 1 (the wait until one permit
 * frees, which bounds any cost), its time is counted from before the call was sent (so it ends no
 * later than the server's {@code T}), and it is ignored once the limit's definition changed (its permits
 * per window, a plan's quota, its window). It is kept at most {@code maxMillis}, so that a reset or
 * a limit change made on another instance is seen by then; while kept, it answers the server's own
 * retry-after and reset, counted from when the call was sent, not the entry's shorter life (a client
 * told to come back in a second would come back every second). Bounded: past {@code maxEntries},
 * expired entries are dropped, and new ones are not kept while it stays full.
 */
final class DenialCache {

    private final ExpiringEntries<Entry.Key, Entry> entries;

    private final long maxMillis;

    /**
     * @param maxEntries the most keys kept
     * @param maxMillis the longest a denial is kept, however long the server said: another instance may
     * reset the key or change its limit meanwhile, and this one learns of it only from the server
     */
    DenialCache(int maxEntries, long maxMillis) {
        this.entries = new ExpiringEntries<>(maxEntries, Entry::keptUntilMillis);
        this.maxMillis = maxMillis;
    }

    /**
     * The cached denial of {@code key} in {@code limit}, or null: an entry made under another
     * definition (another limit, a plan's quota, another window) does not apply.
     */
    Decision get(LimitDefinition limit, String key, long nowMillis) {
        if (this.entries.isEmpty()) {
            // While nothing is denied, the common case: no key made, no hash computed.
            return null;
        }
        Entry entry = this.entries.get(new Entry.Key(limit.name(), key));
        if (entry == null || entry.definition != limit && !entry.definition.equals(limit)) {
            return null;
        }
        if (nowMillis >= entry.keptUntilMillis) {
            this.entries.remove(new Entry.Key(limit.name(), key), entry);
            return null;
        }
        return new Decision(false, limit.limit(), 0, entry.retryAtMillis - nowMillis,
                Math.max(entry.retryAtMillis, entry.resetAtMillis) - nowMillis);
    }

    /** Remembers a rejection, under {@code limit}, of a call of cost 1 that was sent at {@code sentAtMillis}. */
    void put(LimitDefinition limit, String key, Decision rejection, long sentAtMillis, long nowMillis) {
        long retryAtMillis = sentAtMillis + rejection.retryAfterMillis();
        long keptUntilMillis = Math.min(retryAtMillis, nowMillis + this.maxMillis);
        this.entries.put(new Entry.Key(limit.name(), key), new Entry(keptUntilMillis, retryAtMillis,
                sentAtMillis + rejection.resetAfterMillis(), limit), nowMillis);
    }

    void remove(String limitName, String key) {
        this.entries.remove(new Entry.Key(limitName, key));
    }

    /** Forgets every denial. */
    void clear() {
        this.entries.clear();
    }

    /**
     * @param keptUntilMillis when the entry stops answering: the server's retry time, at most
     * {@code maxMillis} after it was made
     * @param retryAtMillis when the server said the next permit frees
     * @param resetAtMillis when the server said the window is empty
     * @param definition the limit's definition when the server denied
     */
    private record Entry(long keptUntilMillis, long retryAtMillis, long resetAtMillis, LimitDefinition definition) {

        private record Key(String limitName, String key) {
        }

    }

}
