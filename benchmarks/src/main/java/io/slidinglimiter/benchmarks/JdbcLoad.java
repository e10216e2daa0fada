package io.slidinglimiter.benchmarks;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.failover.Leases;
import io.slidinglimiter.failover.ResilientBackend;
import io.slidinglimiter.jdbc.CounterTable;
import io.slidinglimiter.jdbc.JdbcBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.PostgresServer;

/**
 * Decisions per second of our database backend from one JVM, against its peers on the same server
 * through the same pool.
 * <p>
 * Ours as an application gets it: {@code RateLimiters} over the core's failover over
 * {@link JdbcBackend}, as {@code LimiterJdbcAutoConfiguration} builds it, with batching on (the
 * default) and off ({@code limiter.jdbc.batching=false}). Bucket4j 8.14's
 * {@code SELECT ... FOR UPDATE} proxy manager (a transaction of three statements per decision), and
 * a bare single-statement upsert of one counter row ({@code INSERT ... ON CONFLICT DO UPDATE ...
 * RETURNING}: the ceiling of one round trip). Each at 1, 16 and 64 callers, on 100 000 random keys
 * and on one hot key (there also ours with leases), through one Hikari pool of 16 connections, the
 * limit never reached. Starts its
 * own PostgreSQL server ({@link PostgresServer}) on a free port; rounds alternate the drivers, each
 * round starting with the next, and the medians are printed last.
 * <pre>
 * java [-Djdbcload.shared-buffers=128MB] -cp ... io.slidinglimiter.benchmarks.JdbcLoad [seconds per run, default 5] [rounds, default 3]
 * </pre>
 */
public final class JdbcLoad {

    private static final int KEYS = 100_000;

    private static final int[] CALLERS = { 1, 16, 64 };

    private static final int POOL = 16;

    private JdbcLoad() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = (args.length > 0) ? Integer.parseInt(args[0]) : 5;
        int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 3;
        // PostgreSQL's own default, where the tests' servers keep 64 MB: the four tables of 100 000 keys
        // are read from shared buffers, as on a database sized for its data.
        String sharedBuffers = System.getProperty("jdbcload.shared-buffers", "128MB");
        try (PostgresServer server = PostgresServer.start(List.of("shared_buffers=" + sharedBuffers));
                HikariDataSource pool = pool(server)) {
            CounterTable table = new CounterTable(CounterTable.DEFAULT_NAME);
            server.execute(table.schema());
            server.execute("CREATE TABLE bucket (id text PRIMARY KEY, state bytea, expires_at bigint)");
            server.execute("CREATE TABLE bare_counter (k text PRIMARY KEY, n bigint NOT NULL)");
            Drivers drivers = new Drivers(pool, table);
            String[] keys = new String[KEYS];
            for (int i = 0; i < KEYS; i++) {
                keys[i] = "user-" + i;
            }
            Map<String, List<Double>> results = new LinkedHashMap<>();
            System.out.printf(Locale.ROOT, "%-10s %-8s %8s %12s %9s %9s %12s %10s%n", "driver", "keys", "callers",
                    "decisions/s", "p50 µs", "p99 µs", "JVM CPU µs", "in the DB");
            for (int round = 0; round < rounds; round++) {
                for (int callers : CALLERS) {
                    for (boolean hot : new boolean[] { false, true }) {
                        // Each round starts with another driver: the first run after the 64-caller runs meets the
                        // database's clean-up of them (autovacuum) and a colder JIT.
                        List<Map.Entry<String, RedisLoad.Decider>> inTurn = new ArrayList<>(drivers.all(keys).entrySet());
                        Collections.rotate(inTurn, -round);
                        for (Map.Entry<String, RedisLoad.Decider> driver : inTurn) {
                            String name = driver.getKey();
                            if ("leased".equals(name) && !hot || !only(name, hot, callers)) {
                                continue;
                            }
                            IntSupplier key = hot ? () -> 0 : () -> ThreadLocalRandom.current().nextInt(KEYS);
                            boolean oursRun = !name.equals("bucket4j") && !name.equals("bare");
                            double perSecond = run(name, hot ? "hot" : "random", callers, seconds, driver.getValue(), key,
                                    oursRun ? drivers.fallbacks::sum : () -> 0);
                            results.computeIfAbsent(name + "|" + (hot ? "hot" : "random") + "|" + callers,
                                    (ignored) -> new ArrayList<>()).add(perSecond);
                        }
                    }
                }
            }
            if (System.getProperty("jdbcload.only") != null) {
                drivers.close();
                return;
            }
            System.out.println();
            System.out.println("Medians of " + rounds + " rounds, decisions per second:");
            System.out.printf(Locale.ROOT, "%-8s %8s %12s %12s %12s %12s %10s %10s %10s%n", "keys", "callers", "ours",
                    "unbatched", "Bucket4j", "bare upsert", "/Bucket4j", "/bare", "unbatched/bare");
            for (String keysMode : new String[] { "random", "hot" }) {
                for (int callers : CALLERS) {
                    double ours = median(results.get("ours|" + keysMode + "|" + callers));
                    double bucket4j = median(results.get("bucket4j|" + keysMode + "|" + callers));
                    double bare = median(results.get("bare|" + keysMode + "|" + callers));
                    double unbatched = median(results.get("unbatched|" + keysMode + "|" + callers));
                    System.out.printf(Locale.ROOT, "%-8s %8d %12.0f %12.0f %12.0f %12.0f %9.2fx %9.2fx %9.2fx%n", keysMode,
                            callers, ours, unbatched, bucket4j, bare, ours / bucket4j, ours / bare, unbatched / bare);
                }
            }
            System.out.println();
            System.out.println("One hot key with leases (limiter.jdbc.lease), medians:");
            System.out.printf(Locale.ROOT, "%8s %12s %12s %10s %12s%n", "callers", "leased", "Bucket4j", "/Bucket4j",
                    "/no lease");
            for (int callers : CALLERS) {
                double leased = median(results.get("leased|hot|" + callers));
                double bucket4j = median(results.get("bucket4j|hot|" + callers));
                double ours = median(results.get("ours|hot|" + callers));
                System.out.printf(Locale.ROOT, "%8d %12.0f %12.0f %9.1fx %11.1fx%n", callers, leased, bucket4j,
                        leased / bucket4j, leased / ours);
            }
            drivers.close();
        }
    }

    /**
     * Whether a run is one the system property {@code jdbcload.only} names ({@code driver|keys|callers},
     * e.g. {@code ours|random|64}, for a profile of one run; several separated by commas, for rounds of
     * a few); every run without it.
     */
    private static boolean only(String driver, boolean hot, int callers) {
        String only = System.getProperty("jdbcload.only");
        return only == null
                || List.of(only.split(",")).contains(driver + "|" + (hot ? "hot" : "random") + "|" + callers);
    }

    private static HikariDataSource pool(PostgresServer server) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl());
        config.setMaximumPoolSize(POOL);
        config.setMinimumIdle(POOL);
        // As docs/postgresql.md asks: Hikari's check of an idle connection within 250 ms, not 5 s.
        config.setValidationTimeout(250);
        return new HikariDataSource(config);
    }

    /** Two seconds of warm-up, then {@code seconds} measured; prints one row. */
    private static double run(String name, String keys, int callers, int seconds, RedisLoad.Decider decider,
            IntSupplier key, LongSupplier fallbacks) throws Exception {
        long fallbacksBefore = fallbacks.getAsLong();
        RedisLoad.Workers workers = new RedisLoad.Workers(callers, 4_000_000, decider, key);
        Thread.sleep(2_000);
        long cpuBefore = jvmCpuNanos();
        long madeBefore = workers.made();
        long start = System.nanoTime();
        workers.measuring.set(true);
        Thread.sleep(seconds * 1_000L);
        workers.measuring.set(false);
        long elapsed = System.nanoTime() - start;
        long made = workers.made() - madeBefore;
        long cpu = jvmCpuNanos() - cpuBefore;
        long[] latencies = workers.stop();
        // Every decision of the run, warm-up included, against those the failure policy made.
        double inDatabase = 100.0 * (1 - (fallbacks.getAsLong() - fallbacksBefore) / (double) workers.made());
        double perSecond = made * 1e9 / elapsed;
        System.out.printf(Locale.ROOT, "%-10s %-8s %8d %12.0f %9.0f %9.0f %12.1f %9.2f%%%n", name, keys, callers,
                perSecond, latencies[latencies.length / 2] / 1e3, latencies[(int) (latencies.length * 0.99)] / 1e3,
                cpu / 1e3 / Math.max(1, made), inDatabase);
        return perSecond;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }

    private static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The three ways to decide, on one pool. */
    static final class Drivers implements AutoCloseable {

        private final HikariDataSource pool;

        private final ResilientBackend ours;

        private final RateLimiters limiters;

        /** Ours with {@code limiter.jdbc.batching=false}: every call its own upsert. */
        private final RateLimiters unbatched;

        /** Ours with leases: what {@code limiter.jdbc.lease=true} builds. */
        private final ResilientBackend leasing;

        private final RateLimiters leased;

        private final ProxyManager<String> bucket4j;

        private final BucketConfiguration bucketConfiguration;

        /** Decisions of ours that the failure policy made, the database not answering in time. */
        final java.util.concurrent.atomic.LongAdder fallbacks = new java.util.concurrent.atomic.LongAdder();

        Drivers(HikariDataSource pool, CounterTable table) {
            this.pool = pool;
            JdbcBackend jdbc = new JdbcBackend(pool, table, Duration.ofMillis(100));
            this.ours = wired(jdbc, null);
            this.limiters = limiters("bench", this.ours);
            JdbcBackend unbatchedJdbc = new JdbcBackend(pool, table, Duration.ofMillis(100));
            unbatchedJdbc.setBatching(false);
            this.unbatched = limiters("bench-unbatched", wired(unbatchedJdbc, null));
            JdbcBackend leasingJdbc = new JdbcBackend(pool, table, Duration.ofMillis(100));
            this.leasing = wired(leasingJdbc, new Leases(leasingJdbc, TimeSource.ticking(), (name) -> true, 100_000, true));
            this.leased = limiters("bench-leased", this.leasing);
            this.bucket4j = Bucket4jPostgreSQL.selectForUpdateBasedBuilder(pool).primaryKeyMapper(PrimaryKeyMapper.STRING)
                    .table("bucket").build();
            this.bucketConfiguration = BucketConfiguration.builder()
                    .addLimit(Bandwidth.builder().capacity(1_000_000_000L)
                            .refillGreedy(1_000_000_000L, Duration.ofSeconds(60)).build())
                    .build();
        }

        /** The resilient backend over a database backend, as the auto-configuration wires it. */
        private ResilientBackend wired(JdbcBackend jdbc, Leases leases) {
            return new ResilientBackend(jdbc, new LocalBackend(TimeSource.ticking(), 1_000_000),
                    new ResilientBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 100_000),
                    TimeSource.ticking(), (ignored) -> this.fallbacks.increment(), jdbc::ping, leases);
        }

        /** Rate limiters of one limit that no later call reaches, on a backend. */
        private static RateLimiters limiters(String name, ResilientBackend backend) {
            LimitRegistry registry = new LimitRegistry();
            registry.register(LimitDefinition.of(name, 1_000_000_000L, Duration.ofSeconds(60), 10));
            return new RateLimiters(registry, backend);
        }

        Map<String, RedisLoad.Decider> all(String[] keys) {
            Map<String, RedisLoad.Decider> drivers = new LinkedHashMap<>();
            drivers.put("ours", (key) -> this.limiters.tryAcquire("bench", keys[key]).allowed());
            drivers.put("unbatched", (key) -> this.unbatched.tryAcquire("bench-unbatched", keys[key]).allowed());
            drivers.put("leased", (key) -> this.leased.tryAcquire("bench-leased", keys[key]).allowed());
            drivers.put("bucket4j", (key) -> this.bucket4j.builder().build(keys[key], () -> this.bucketConfiguration)
                    .tryConsume(1));
            drivers.put("bare", (key) -> {
                try (Connection connection = this.pool.getConnection(); PreparedStatement upsert = connection
                        .prepareStatement("INSERT INTO bare_counter (k, n) VALUES (?, 1) ON CONFLICT (k) DO UPDATE"
                                + " SET n = bare_counter.n + 1 RETURNING n")) {
                    upsert.setString(1, keys[key]);
                    try (ResultSet result = upsert.executeQuery()) {
                        return result.next() && result.getLong(1) > 0;
                    }
                }
            });
            return drivers;
        }

        @Override
        public void close() {
            this.ours.close();
            this.leasing.close();
        }

    }

}
