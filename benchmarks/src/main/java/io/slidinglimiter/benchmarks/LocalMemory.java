package io.slidinglimiter.benchmarks;

import java.time.Duration;
import java.util.Locale;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.local.LocalBackend;

/**
 * Heap per live local key.
 * <p>
 * Fills a {@link LocalBackend} with 500 000 keys and compares the heap
 * after a full GC before and after (the keys themselves are allocated beforehand, so they are not
 * counted).
 * <pre>
 * java -Xmx4g -XX:+UseSerialGC -cp ... io.slidinglimiter.benchmarks.LocalMemory [sub-windows, default 10]
 * </pre>
 */
public final class LocalMemory {

    private LocalMemory() {
    }

    public static void main(String[] args) throws InterruptedException {
        int subWindows = (args.length > 0) ? Integer.parseInt(args[0]) : 10;
        int keys = 500_000;
        LocalBackend backend = new LocalBackend(new ManualTimeSource(1_700_000_000_000L), 10_000_000, Long.MAX_VALUE);
        System.out.printf(Locale.ROOT, "sub-windows %d: %.1f bytes per live key (keys excluded); the bound estimates"
                + " %.1f with the key%n", subWindows, bytesPerKey(backend, subWindows, keys),
                backend.liveBytes() / (double) (keys + 1));
    }

    /**
     * Fills {@code backend} with {@code keys} keys of a limit with {@code subWindows} sub-windows.
     * @return the heap each live key took, the key's own string excluded
     */
    static double bytesPerKey(LocalBackend backend, int subWindows, int keys) throws InterruptedException {
        LimitDefinition limit = LimitDefinition.of("api", 100, Duration.ofMinutes(1), subWindows);
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = "client-" + i;
        }
        backend.tryAcquire(limit, "warm-up", 1);
        long before = heapAfterGc();
        for (String name : names) {
            backend.tryAcquire(limit, name, 1);
        }
        long after = heapAfterGc();
        return (after - before) / (double) keys;
    }

    static long heapAfterGc() throws InterruptedException {
        Runtime runtime = Runtime.getRuntime();
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return runtime.totalMemory() - runtime.freeMemory();
    }

}
