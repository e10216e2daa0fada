package io.slidinglimiter.local;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.internal.CounterKeys;

/** One limit's counters, all of one geometry, with the sketch for keys that find no room. */
final class LimitCounters {

    /** A counter's fixed cost beyond its arrays: object headers, fields, lock, map entry. */
    private static final long COUNTER_OVERHEAD_BYTES = 160;

    /** A key's cost beyond its characters: the String object and its array header. */
    private static final long KEY_OVERHEAD_BYTES = 40;

    /** The limit's name, as the definition that created these counters holds it. */
    final String name;

    /** Set, under the backend's {@code nearLock}, when these counters may no longer be near ones. */
    boolean leftNear;

    /** Counters by key, for keys of at most {@value CounterKeys#MAX_KEY_BYTES} UTF-8 bytes. */
    final Map<String, WindowCounter> counters = new ConcurrentHashMap<>();

    /** Counters of longer keys, by {@linkplain CounterKeys#digest(String) digest}. */
    final Map<String, WindowCounter> digests = new ConcurrentHashMap<>();

    final OverflowSketch sketch;

    private final LongFunction<WindowCounter> factory;

    private final long counterBytes;

    /** Set, under the sketch's monitor, when the limit's window changed: no counter is added any more. */
    boolean drained;

    LimitCounters(LimitDefinition geometry, CounterMemory memory, long overflowKeys) {
        this.name = geometry.name();
        this.factory = WindowCounter.factory(geometry, memory);
        this.sketch = new OverflowSketch(geometry, overflowKeys);
        this.counterBytes = COUNTER_OVERHEAD_BYTES + WindowCounter.initialArrayBytes(geometry);
    }

    boolean countsFor(LimitDefinition definition) {
        return this.sketch.countsFor(definition);
    }

    void markDrained() {
        synchronized (this.sketch) {
            this.drained = true;
        }
    }

    boolean isDrained() {
        synchronized (this.sketch) {
            return this.drained;
        }
    }

    long weightOf(String key) {
        return this.counterBytes + KEY_OVERHEAD_BYTES + 2L * key.length();
    }

    /**
     * A new counter for {@code key}, unless the key has counts in the sketch (starting from zero
     * would forget them) or another thread created one first.
     * @return the counter this call created, or null
     */
    WindowCounter createIfSketchIsEmpty(StoredKey stored, long nowMillis, long generation) {
        WindowCounter[] created = new WindowCounter[1];
        this.sketch.whenEmptyFor(stored.key(), stored.isDigest(), nowMillis, () -> {
            // Under the sketch's monitor, as the drain's mark: a drained limit gets no new counter.
            if (!this.drained) {
                stored.map().computeIfAbsent(stored.key(), (ignored) -> created[0] = this.factory.apply(nowMillis)
                        .startingAt(generation));
            }
        });
        return created[0];
    }

}
