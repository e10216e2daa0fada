package io.slidinglimiter.benchmarks;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.autoconfigure.LimiterRedisAutoConfiguration.LimiterRedis;
import io.slidinglimiter.testsupport.RedisClusterServers;
import io.slidinglimiter.testsupport.RedisSentinelServers;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * The Redis failover trial over real HTTP.
 * <p>
 * The failover trial of issue "Redis failover, Sentinel and Cluster", over real HTTP: an
 * application configured only through Spring Boot's {@code spring.data.redis.sentinel.*} or
 * {@code spring.data.redis.cluster.nodes}; a load of about 1 300 requests/s on a limit that is never
 * reached (random keys, so on Cluster every shard is hit); a steady caller at twice a limit of 50
 * per 10 s; at 10 s the first master is killed ({@code kill -9}) or stalled ({@code DEBUG SLEEP});
 * 50 s in all. Prints, per run: when the replica became master and when the first decision reached
 * it (from the fault), the limiter's fallback decisions, the 429s of the never-reached limit, the
 * scripts the old master ran after it woke, and the steady caller's most admissions in any 9 s
 * (the window less a sub-window: the sliding window counter's bound) and 10 s.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.HttpFailover [sentinel|cluster] [kill|stall]
 * [fail-open|fail-closed|local]
 * </pre>
 */
public final class HttpFailover {

    private static final int RATE = 1_300;

    private static final int LOAD_THREADS = 8;

    private HttpFailover() {
    }

    public static void main(String[] args) throws Exception {
        String topology = (args.length > 0) ? args[0] : "sentinel";
        String fault = (args.length > 1) ? args[1] : "kill";
        String policy = (args.length > 2) ? args[2] : "fail-open";
        boolean cluster = topology.equals("cluster");
        AutoCloseable servers;
        RedisServer master;
        RedisServer replica;
        List<String> properties = new ArrayList<>(List.of("server.port=0", BenchApplication.WITHOUT_METRICS, "limiter.backend=redis",
                "limiter.redis.timeout=100ms", "limiter.redis.on-failure=" + policy, "limiter.limits.open.limit=1000000000",
                "limiter.limits.open.window=10s", "limiter.limits.steady.limit=50", "limiter.limits.steady.window=10s",
                "logging.level.io.slidinglimiter=WARN"));
        if (cluster) {
            RedisClusterServers replicated = RedisClusterServers.startWithReplicas();
            servers = replicated;
            master = replicated.nodes().get(0);
            replica = replicated.replicas().get(0);
            properties.add("spring.data.redis.cluster.nodes=" + String.join(",",
                    replicated.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList()));
        }
        else {
            RedisSentinelServers sentinel = RedisSentinelServers.start();
            servers = sentinel;
            master = sentinel.master();
            replica = sentinel.replica();
            properties.add("spring.data.redis.sentinel.master=" + RedisSentinelServers.MASTER);
            properties.add("spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelNodes()));
        }
        try (servers; ConfigurableApplicationContext context = new SpringApplicationBuilder(FailoverApplication.class)
                .properties(properties.toArray(String[]::new)).run()) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            LimiterRedis redis = context.getBean(LimiterRedis.class);
            Trial trial = new Trial(port);
            if (servers instanceof RedisSentinelServers sentinel) {
                trial.listenForSwitch(sentinel);
            }
            trial.run(master, replica, cluster, fault, redis);
            trial.close();
        }
    }

    /** One run: load, steady caller, fault, observer. */
    private static final class Trial {

        private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

        private final int port;

        private final AtomicLong ok = new AtomicLong();

        private final AtomicLong tooMany = new AtomicLong();

        private final AtomicLong other = new AtomicLong();

        private final List<Long> steadyAdmitted = Collections.synchronizedList(new ArrayList<>());

        private volatile boolean running = true;

        /** When a sentinel announced {@code +switch-master}; 0 until then. */
        private final AtomicLong switchedAt = new AtomicLong();

        private RedisClient sentinelClient;

        Trial(int port) {
            this.port = port;
        }

        void listenForSwitch(RedisSentinelServers sentinel) {
            this.sentinelClient = RedisClient.create(RedisURI.create("127.0.0.1", sentinel.sentinels().get(0).port()));
            StatefulRedisPubSubConnection<String, String> connection = this.sentinelClient.connectPubSub();
            connection.addListener(new RedisPubSubAdapter<>() {

                @Override
                public void message(String channel, String message) {
                    Trial.this.switchedAt.compareAndSet(0, System.nanoTime());
                }

            });
            connection.sync().subscribe("+switch-master");
        }

        void close() {
            if (this.sentinelClient != null) {
                this.sentinelClient.shutdown();
            }
        }

        void run(RedisServer master, RedisServer replica, boolean cluster, String fault, LimiterRedis redis)
                throws Exception {
            for (int i = 0; i < 200; i++) {
                get("/open?key=warm" + i);
            }
            long start = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < LOAD_THREADS; t++) {
                threads.add(started(() -> paced(start, RATE / LOAD_THREADS,
                        () -> count(get("/open?key=k" + ThreadLocalRandom.current().nextInt(100_000))))));
            }
            threads.add(started(() -> paced(start, 10, () -> {
                long sent = System.nanoTime();
                if (get("/steady") == 200) {
                    this.steadyAdmitted.add(sent);
                }
            })));
            sleepUntil(start, 10_000);
            long fallbacksBefore = redis.backend().status().fallbackDecisions();
            long tooManyBefore = this.tooMany.get();
            long replicaScripts = replica.scriptCalls();
            long faultAt = System.nanoTime();
            int stallSeconds = cluster ? 20 : 30;
            Thread sleeper = null;
            if (fault.equals("kill")) {
                master.kill();
            }
            else {
                sleeper = started(() -> master.stall(stallSeconds));
            }
            long promotedAt = 0;
            long decidedAt = 0;
            while (decidedAt == 0 && System.nanoTime() - faultAt < Duration.ofSeconds(35).toNanos()) {
                if (promotedAt == 0 && isMaster(replica, cluster)) {
                    promotedAt = System.nanoTime();
                }
                if (promotedAt != 0 && scriptCalls(replica) > replicaScripts) {
                    decidedAt = System.nanoTime();
                }
                Thread.sleep(20);
            }
            long scriptsAtWake = -1;
            long scriptsAfterWake = -1;
            if (sleeper != null) {
                sleeper.join();
                scriptsAtWake = scriptCalls(master);
                Thread.sleep(5_000);
                scriptsAfterWake = scriptCalls(master);
            }
            sleepUntil(start, 50_000);
            this.running = false;
            for (Thread thread : threads) {
                thread.join();
            }
            long switched = this.switchedAt.get();
            System.out.printf(Locale.ROOT, "%s %s %s: promoted %.1f s after the fault, first decision on it %.1f s"
                    + " after the fault (%d ms after the promotion%s); fallback decisions %d; 429 on the open limit %d;"
                    + " other statuses %d; scripts the old master ran in the 5 s after it woke %s;"
                    + " steady caller admitted %d of %d, most in any 9 s %d, in any 10 s %d%n",
                    cluster ? "cluster" : "sentinel", fault, redis.defaultPolicy().id(),
                    seconds(promotedAt - faultAt), seconds(decidedAt - faultAt), (decidedAt - promotedAt) / 1_000_000,
                    (switched == 0) ? "" : ", " + (decidedAt - switched) / 1_000_000 + " ms after +switch-master",
                    redis.backend().status().fallbackDecisions() - fallbacksBefore, this.tooMany.get() - tooManyBefore,
                    this.other.get(), (sleeper == null) ? "-" : Long.toString(scriptsAfterWake - scriptsAtWake),
                    this.steadyAdmitted.size(), 500, mostWithin(this.steadyAdmitted, Duration.ofSeconds(9)),
                    mostWithin(this.steadyAdmitted, Duration.ofSeconds(10)));
        }

        private void paced(long start, int perSecond, Runnable call) {
            long interval = 1_000_000_000L / perSecond;
            for (long n = 0; this.running; n++) {
                long wait = start + n * interval - System.nanoTime();
                if (wait > 0) {
                    sleepNanos(wait);
                }
                call.run();
            }
        }

        private void count(int status) {
            (status == 200 ? this.ok : status == 429 ? this.tooMany : this.other).incrementAndGet();
        }

        private int get(String path) {
            try {
                return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
            }
            catch (Exception ex) {
                return -1;
            }
        }

    }

    private static Thread started(Runnable work) {
        Thread thread = new Thread(work);
        thread.start();
        return thread;
    }

    private static boolean isMaster(RedisServer server, boolean cluster) {
        if (cluster) {
            return RedisClusterServers.isMaster(server);
        }
        return quietly(() -> server.<String>call((redis) -> redis.info("replication")).contains("role:master"));
    }

    private static long scriptCalls(RedisServer server) {
        try {
            return server.scriptCalls();
        }
        catch (RuntimeException ex) {
            return -1;
        }
    }

    private static boolean quietly(BooleanSupplier check) {
        try {
            return check.getAsBoolean();
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    private static void sleepUntil(long start, long millis) throws InterruptedException {
        long wait = start + millis * 1_000_000L - System.nanoTime();
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }

    private static void sleepNanos(long nanos) {
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** The most timestamps within any interval of the given length. */
    static int mostWithin(List<Long> times, Duration interval) {
        List<Long> sorted = new ArrayList<>(times);
        Collections.sort(sorted);
        int most = 0;
        int from = 0;
        for (int to = 0; to < sorted.size(); to++) {
            while (sorted.get(to) - sorted.get(from) >= interval.toNanos()) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }

    /** The trial's application: a limit never reached, and the steady caller's. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @RestController
    public static class FailoverApplication {

        @GetMapping("/open")
        @RateLimited(name = "open", key = "#key")
        public String open(@RequestParam String key) {
            return "ok";
        }

        @GetMapping("/steady")
        @RateLimited(name = "steady", key = "#request.remoteAddr")
        public String steady(HttpServletRequest request) {
            return "ok";
        }

    }

}
