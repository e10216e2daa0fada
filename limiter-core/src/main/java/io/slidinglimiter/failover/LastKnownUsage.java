package io.slidinglimiter.failover;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.RateLimitBackend;

/**
 * What the server last said each key of a {@link FailurePolicy#LOCAL local}-policy limit had used, so
 * that the local counter that takes over during an outage starts from it instead of from zero: a
 * key at its limit on the server stays rejected, a nearly spent one has only what was left. The permits
 * are counted locally from the switch on, so they stay a little longer than on the server: an
 * over-count, never an under-count. Bounded like the denial cache ({@link ExpiringEntries}).
 */
final class LastKnownUsage {

    private final ExpiringEntries<Key, Usage> usages;

    LastKnownUsage(int maxEntries) {
        this.usages = new ExpiringEntries<>(maxEntries, Usage::untilMillis);
    }

    /** Remembers what a decision of the server at {@code sentAtMillis} said the key has used. */
    void record(LimitDefinition limit, String key, Decision decision, long sentAtMillis) {
        long used = decision.limit() - decision.remaining();
        Key entryKey = new Key(limit.name(), key);
        if (used <= 0) {
            this.usages.remove(entryKey);
            return;
        }
        this.usages.put(entryKey, new Usage(used, sentAtMillis + decision.resetAfterMillis()), sentAtMillis);
    }

    /**
     * Counts in {@code local}, once, what the server last said the key had used, if it has not all left
     * the window since.
     */
    void seed(RateLimitBackend local, LimitDefinition limit, String key, long nowMillis) {
        Usage usage = this.usages.remove(new Key(limit.name(), key));
        if (usage != null && usage.untilMillis > nowMillis) {
            local.tryAcquire(limit, key, Math.min(usage.used, limit.limit()));
        }
    }

    void remove(String limitName, String key) {
        this.usages.remove(new Key(limitName, key));
    }

    private record Key(String limitName, String key) {
    }

    private record Usage(long used, long untilMillis) {
    }

}
