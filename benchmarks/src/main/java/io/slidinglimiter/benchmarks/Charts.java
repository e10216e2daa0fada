package io.slidinglimiter.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.StandardChartTheme;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.AbstractRenderer;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYItemRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.local.RawCounter;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * Draws the project's charts into {@code docs/charts}.
 * <p>
 * Draws the README's and BENCHMARKS.md's charts from runs of the project's own code, into
 * {@code docs/charts}: the boundary burst and the accuracy/memory trade-off (our counters on a
 * fake clock), our public API beside the peers' limiters in-process (JMH), Redis decisions per
 * second by callers (ours as applications get it, beside Bucket4j's Lettuce backend, on a
 * redis-server it starts), and a flood of distinct keys against the local backend's bound.
 * <pre>
 * benchmarks/charts.sh [burst] [accuracy] [in-process] [redis] [flood]    (all when none is named)
 * </pre>
 */
public final class Charts {

    private static final Path OUT = Path.of("docs/charts");

    private static final int WIDTH = 900;

    private static final int HEIGHT = 480;

    private static final Color OURS = new Color(0x1f, 0x77, 0xb4);

    private static final Color[] PALETTE = { OURS, new Color(0xd6, 0x27, 0x28), new Color(0x2c, 0xa0, 0x2c),
            new Color(0xff, 0x7f, 0x0e), new Color(0x94, 0x67, 0xbd), new Color(0x7f, 0x7f, 0x7f) };

    private Charts() {
    }

    public static void main(String[] args) throws Exception {
        Set<String> only = Set.of(args);
        Files.createDirectories(OUT);
        if (only.isEmpty() || only.contains("burst")) {
            burst();
        }
        if (only.isEmpty() || only.contains("accuracy")) {
            accuracy();
        }
        if (only.isEmpty() || only.contains("in-process")) {
            inProcess();
        }
        if (only.isEmpty() || only.contains("redis")) {
            redis();
        }
        if (only.isEmpty() || only.contains("flood")) {
            flood();
        }
    }

    /**
     * The same traffic (two calls a millisecond from 900 ms on) against a limit of 100 per second,
     * counted by a fixed window (the sliding window counter with one slot), the sliding window
     * counter with ten slots and the sliding log: what each admits per 10 ms around the boundary.
     */
    static void burst() throws IOException {
        long start = 1_700_000_000_000L;
        Map<String, RawCounter> counters = new LinkedHashMap<>();
        counters.put("fixed window", RawCounter.slidingWindow(1_000, 1, start));
        counters.put("counter, N = 10", RawCounter.slidingWindow(1_000, 10, start));
        counters.put("sliding log", RawCounter.slidingLog(1_000));
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(
                new NumberAxis("time (ms); the window boundary is at 1 000 ms"));
        ((NumberAxis) plot.getDomainAxis()).setAutoRangeIncludesZero(false);
        for (Map.Entry<String, RawCounter> counter : counters.entrySet()) {
            long[] perBucket = new long[70];
            for (int millis = 800; millis < 1_500; millis++) {
                for (int call = 0; call < ((millis >= 900) ? 2 : 0); call++) {
                    if (counter.getValue().tryAcquire(start + millis, 1, 100).allowed()) {
                        perBucket[(millis - 800) / 10]++;
                    }
                }
            }
            XYSeries series = new XYSeries(counter.getKey() + ": admitted");
            XYSeries offered = new XYSeries("offered");
            for (int bucket = 0; bucket < perBucket.length; bucket++) {
                series.add(800 + bucket * 10, perBucket[bucket]);
                offered.add(800 + bucket * 10, (800 + bucket * 10 >= 900) ? 20 : 0);
            }
            XYSeriesCollection dataset = new XYSeriesCollection(series);
            dataset.addSeries(offered);
            NumberAxis perTen = new NumberAxis(counter.getKey());
            perTen.setRange(0, 24);
            XYPlot subplot = new XYPlot(dataset, null, perTen, new XYStepRenderer());
            plot.add(subplot);
        }
        JFreeChart chart = chart("Calls admitted per 10 ms: limit 100 per second, 2 calls/ms from 900 ms", plot);
        int index = 0;
        for (Object subplot : plot.getSubplots()) {
            XYItemRenderer renderer = ((XYPlot) subplot).getRenderer();
            renderer.setSeriesPaint(0, PALETTE[index++]);
            renderer.setSeriesStroke(0, new BasicStroke(2.5f));
            renderer.setSeriesPaint(1, Color.GRAY);
            renderer.setSeriesStroke(1, new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10,
                    new float[] { 6, 4 }, 0));
            renderer.setSeriesVisibleInLegend(1, index == 1);
        }
        save("boundary-burst.png", chart, 600);
        System.out.println("burst: fixed window admits 100 at 900 ms and 100 more at 1 000 ms; the others none after"
                + " the first 100");
    }

    /**
     * For N slots: the shortest time in which two full quotas get through (the limit at the last
     * millisecond of a slot, then again the moment that slot leaves: measured on the counter), and
     * the heap each live key takes (measured with 20 000 keys).
     */
    static void accuracy() throws InterruptedException, IOException {
        DefaultCategoryDataset span = new DefaultCategoryDataset();
        DefaultCategoryDataset bytes = new DefaultCategoryDataset();
        long windowMillis = 60_000;
        for (int slots : new int[] { 1, 2, 4, 10, 20, 60, 120, 600 }) {
            long slotMillis = windowMillis / slots;
            long start = 1_700_000_040_000L;
            RawCounter counter = RawCounter.slidingWindow(windowMillis, slots, start);
            long first = start + slotMillis - 1;
            counter.tryAcquire(first, 100, 100);
            long second = first + 1;
            while (!counter.tryAcquire(second, 100, 100).allowed()) {
                second++;
            }
            double percent = 100.0 * (second - first) / windowMillis;
            String category = (slots == 1) ? "N = 1 (fixed)" : "N = " + slots;
            span.addValue(percent, "shortest time for 2 × limit (% of the window)", category);
            double perKey = bytesPerKey(slots);
            bytes.addValue(perKey, "heap per key (bytes)", category);
            System.out.printf(Locale.ROOT, "accuracy: N=%d: 2 x limit within %.2f %% of W; %.0f bytes per key%n",
                    slots, percent, perKey);
        }
        CategoryPlot plot = new CategoryPlot(span, new CategoryAxis("sub-windows per window (N)"),
                new NumberAxis("shortest time for 2 × limit, % of W (sliding log: never)"), new BarRenderer());
        plot.getRangeAxis().setRange(0, 105);
        NumberAxis heap = new NumberAxis("heap per live key (bytes)");
        plot.setRangeAxis(1, heap);
        plot.setDataset(1, bytes);
        plot.mapDatasetToRangeAxis(1, 1);
        LineAndShapeRenderer line = new LineAndShapeRenderer();
        plot.setRenderer(1, line);
        plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
        JFreeChart chart = chart("More sub-windows: a tighter bound, more memory per key", plot);
        style(plot.getRenderer(), 1);
        line.setSeriesPaint(0, PALETTE[1]);
        line.setSeriesStroke(0, new BasicStroke(2.5f));
        save("accuracy-memory.png", chart);
    }

    private static double bytesPerKey(int slots) throws InterruptedException {
        LocalBackend backend = new LocalBackend(new ManualTimeSource(1_700_000_000_000L), 1_000_000, Long.MAX_VALUE);
        double perKey = LocalMemory.bytesPerKey(backend, slots, 20_000);
        Reference.reachabilityFence(backend);
        return perKey;
    }

    /** Our public API beside the peers' own limiters, one thread, allow and reject (JMH, ops/µs). */
    static void inProcess() throws Exception {
        Map<String, String[]> rows = new LinkedHashMap<>();
        rows.put("Sliding Limiter", new String[] { "publicApiAllow", "publicApiReject" });
        rows.put("Guava", new String[] { "guavaAllow", "guavaReject" });
        rows.put("Resilience4j", new String[] { "resilience4jAllow", "resilience4jReject" });
        rows.put("Bucket4j", new String[] { "bucket4jAllow", "bucket4jReject" });
        rows.put("Sentinel", new String[] { "sentinelLeapArrayAllow", null });
        List<String> methods = new ArrayList<>();
        rows.values().forEach((pair) -> {
            for (String method : pair) {
                if (method != null) {
                    methods.add(method);
                }
            }
        });
        Map<String, Double> scores = new LinkedHashMap<>();
        for (RunResult result : new Runner(new OptionsBuilder()
                .include("LocalBenchmarks\\.(" + String.join("|", methods) + ")$").forks(1).threads(1)
                .warmupIterations(2).warmupTime(TimeValue.seconds(1))
                .measurementIterations(3).measurementTime(TimeValue.seconds(1))
                .build()).run()) {
            String label = result.getParams().getBenchmark();
            scores.put(label.substring(label.lastIndexOf('.') + 1), result.getPrimaryResult().getScore());
        }
        DefaultCategoryDataset dataset = new DefaultCategoryDataset();
        for (Map.Entry<String, String[]> row : rows.entrySet()) {
            dataset.addValue(scores.get(row.getValue()[0]), "allow", row.getKey());
            if (row.getValue()[1] != null) {
                dataset.addValue(scores.get(row.getValue()[1]), "reject", row.getKey());
            }
        }
        System.out.println("in-process (ops/us): " + scores);
        CategoryPlot plot = new CategoryPlot(dataset, new CategoryAxis(null),
                new NumberAxis("decisions per µs, one thread (higher is better)"), new BarRenderer());
        JFreeChart chart = chart("In-process decisions, one key, one thread (JMH, same run)", plot);
        style(plot.getRenderer(), 2);
        save("in-process.png", chart);
    }

    /**
     * Decisions per second on one redis-server by callers: a bare Lettuce EVALSHA of our script (one
     * script call a decision, nothing around it), Bucket4j's Lettuce backend, and ours as applications
     * get it with batching off and on.
     */
    static void redis() throws Exception {
        XYSeriesCollection dataset = new XYSeriesCollection();
        XYSeries batched = new XYSeries("Sliding Limiter, batched (the default; resilient backend, 100 ms timeout)");
        XYSeries unbatched = new XYSeries("Sliding Limiter, unbatched (limiter.redis.batching=false)");
        XYSeries bare = new XYSeries("bare Lettuce EVALSHA of our script, one call a decision");
        XYSeries bucket4j = new XYSeries("Bucket4j (Lettuce, compare-and-swap)");
        try (RedisServer server = RedisServer.start(); RedisLoad.Drivers drivers = new RedisLoad.Drivers(server)) {
            for (int threads : new int[] { 1, 4, 16, 64 }) {
                // Each point the median of three runs, alternated: one run of this VM swings by ±15 %.
                double[][] runs = new double[4][3];
                for (int run = 0; run < 3; run++) {
                    runs[0][run] = RedisLoad.run("ours, wired, batched", threads, 3, server, drivers.wired(),
                            drivers.wiredRunner);
                    runs[1][run] = RedisLoad.run("ours, wired, unbatched", threads, 3, server, drivers.unbatched());
                    runs[2][run] = RedisLoad.run("lettuce EVALSHA ours", threads, 3, server, drivers.evalshaOurs());
                    runs[3][run] = RedisLoad.run("bucket4j lettuce", threads, 3, server, drivers.bucket4j());
                }
                XYSeries[] series = { batched, unbatched, bare, bucket4j };
                for (int i = 0; i < series.length; i++) {
                    java.util.Arrays.sort(runs[i]);
                    series[i].add(threads, runs[i][1]);
                    System.out.printf(Locale.ROOT, "median %s %d: %.0f%n", series[i].getKey(), threads, runs[i][1]);
                }
            }
        }
        dataset.addSeries(batched);
        dataset.addSeries(unbatched);
        dataset.addSeries(bare);
        dataset.addSeries(bucket4j);
        LogarithmicAxis callers = new LogarithmicAxis("calling threads (log scale)");
        XYPlot plot = new XYPlot(dataset, callers, new NumberAxis("decisions per second"),
                new XYLineAndShapeRenderer(true, true));
        JFreeChart chart = chart("Redis: decisions per second by callers, 100 000 keys", plot);
        style(plot.getRenderer(), 4);
        save("redis-by-callers.png", chart);
    }

    /**
     * A flood of distinct keys against the local backend bounded to 100 000 counters: the heap it
     * holds and the decisions per µs as the keys seen grow to 1 000 000, past the bound.
     */
    static void flood() throws InterruptedException, IOException {
        LocalBackend backend = new LocalBackend(new ManualTimeSource(1_700_000_000_000L), 100_000);
        LimitDefinition limit = LimitDefinition.of("api", 100, Duration.ofMinutes(1), 10);
        XYSeriesCollection heap = new XYSeriesCollection();
        XYSeries megabytes = new XYSeries("heap held by the limiter (MB)");
        XYSeriesCollection speed = new XYSeriesCollection();
        XYSeries rate = new XYSeries("decisions per µs");
        int step = 50_000;
        String[] names = new String[step];
        long base = LocalMemory.heapAfterGc();
        megabytes.add(0, 0);
        for (int seen = step; seen <= 1_000_000; seen += step) {
            for (int i = 0; i < step; i++) {
                names[i] = "client-" + (seen - step + i);
            }
            long started = System.nanoTime();
            for (String name : names) {
                backend.tryAcquire(limit, name, 1);
            }
            long took = System.nanoTime() - started;
            megabytes.add(seen, (LocalMemory.heapAfterGc() - base) / 1e6);
            rate.add(seen, step * 1e3 / took);
        }
        heap.addSeries(megabytes);
        speed.addSeries(rate);
        XYPlot plot = new XYPlot(heap, new NumberAxis("distinct keys seen (the bound is 100 000 counters)"),
                new NumberAxis("heap held (MB)"), new XYLineAndShapeRenderer(true, false));
        plot.setDataset(1, speed);
        plot.setRangeAxis(1, new NumberAxis("decisions per µs"));
        plot.mapDatasetToRangeAxis(1, 1);
        XYLineAndShapeRenderer second = new XYLineAndShapeRenderer(true, false);
        plot.setRenderer(1, second);
        JFreeChart chart = chart("A flood of distinct keys: memory stays bounded", plot);
        style(plot.getRenderer(), 1);
        second.setSeriesPaint(0, PALETTE[1]);
        second.setSeriesStroke(0, new BasicStroke(2.5f));
        System.out.printf(Locale.ROOT, "flood: %.1f MB held after 1 000 000 keys%n",
                megabytes.getY(megabytes.getItemCount() - 1).doubleValue());
        save("key-flood.png", chart);
    }

    private static void style(Object plotRenderer, int series) {
        AbstractRenderer renderer = (AbstractRenderer) plotRenderer;
        for (int i = 0; i < series; i++) {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2.5f));
        }
        if (renderer instanceof BarRenderer bars) {
            bars.setShadowVisible(false);
            bars.setDrawBarOutline(false);
        }
    }

    /** A chart in the project's theme; series colours are set after, since a theme resets them. */
    private static JFreeChart chart(String title, Plot plot) {
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        StandardChartTheme theme = (StandardChartTheme) StandardChartTheme.createJFreeTheme();
        theme.setExtraLargeFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        theme.setPlotBackgroundPaint(Color.WHITE);
        theme.setDomainGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        theme.setRangeGridlinePaint(new Color(0xdd, 0xdd, 0xdd));
        theme.setChartBackgroundPaint(Color.WHITE);
        theme.apply(chart);
        return chart;
    }

    private static void save(String name, JFreeChart chart) throws IOException {
        save(name, chart, HEIGHT);
    }

    private static void save(String name, JFreeChart chart, int height) throws IOException {
        ChartUtils.saveChartAsPNG(OUT.resolve(name).toFile(), chart, WIDTH, height);
        System.out.println("wrote " + OUT.resolve(name));
    }

}
