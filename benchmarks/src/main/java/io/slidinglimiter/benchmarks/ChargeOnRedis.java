package io.slidinglimiter.benchmarks;

import java.util.Locale;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.slidinglimiter.testsupport.RedisServer;

/**
 * What a charge costs an annotated call on Redis.
 * <p>
 * The annotated call on the Redis backend as an application gets it (the resilient backend with
 * its 100 ms timeout), without a charge, charged its cost, and settled lower than its cost:
 * decisions per second and script calls per call, which show the settle's one extra round trip
 * only where the charge differs. Starts its own redis-server on a free port.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.ChargeOnRedis [seconds per run, default 5]
 * </pre>
 */
public final class ChargeOnRedis {

    private ChargeOnRedis() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = (args.length > 0) ? Integer.parseInt(args[0]) : 5;
        String never = Long.toString(1_000_000_000L);
        try (RedisServer server = RedisServer.start()) {
            ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchApplication.class)
                    .web(WebApplicationType.NONE).logStartupInfo(false)
                    .properties("logging.level.root=warn", BenchApplication.WITHOUT_METRICS, "limiter.backend=redis",
                            "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + server.port(),
                            "limiter.limits.allow.limit=" + never, "limiter.limits.allow.window=1s",
                            "limiter.limits.charged-less.limit=" + never, "limiter.limits.charged-less.window=1s",
                            "limiter.limits.charged-same.limit=" + never, "limiter.limits.charged-same.window=1s")
                    .run();
            BenchService service = context.getBean(BenchService.class);
            String[] keys = new String[RedisLoad.KEYS];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = "client-" + i;
            }
            System.out.printf(Locale.ROOT, "%-22s %8s %12s %9s %9s %14s %14s %12s%n", "call", "threads",
                    "calls/s", "p50 us", "p99 us", "JVM CPU us/op", "Redis CPU us/op", "scripts %");
            for (int threads : new int[] { 1, 16 }) {
                RedisLoad.run("annotated", threads, seconds, server, (key) -> service.call(keys[key]) != null);
                RedisLoad.run("charged its cost", threads, seconds, server,
                        (key) -> service.chargedSame(keys[key]) != null);
                RedisLoad.run("charged below cost", threads, seconds, server,
                        (key) -> service.chargedLess(keys[key]) != null);
            }
            SpringApplication.exit(context);
        }
    }

}
