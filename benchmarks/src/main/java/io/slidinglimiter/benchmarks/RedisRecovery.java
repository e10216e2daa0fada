package io.slidinglimiter.benchmarks;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.ResilientRedisBackend;
import io.slidinglimiter.testsupport.RedisServer;

/**
 * How long after Redis comes back the limiter decides in Redis again, after an outage of a given
 * length.
 * <p>
 * The wired backend with its probe (as the starter wires it), and without one, where only
 * a decision (here one every 100 ms) and Lettuce's own reconnection, whose delay doubles up to
 * 30 s, bring it back. Starts its own redis-server on a free port and stops it for the outage.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.RedisRecovery [outage seconds, default 60]
 * </pre>
 */
public final class RedisRecovery {

    private RedisRecovery() {
    }

    public static void main(String[] args) throws Exception {
        int outageSeconds = (args.length > 0) ? Integer.parseInt(args[0]) : 60;
        System.out.printf(Locale.ROOT, "%-12s %10s %22s%n", "probe", "outage s", "back in Redis after ms");
        for (boolean probe : new boolean[] { true, false }) {
            try (RedisServer server = RedisServer.start()) {
                LettuceConnectionFactory factory = new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration("127.0.0.1", server.port()));
                factory.afterPropertiesSet();
                factory.start();
                LettuceScriptRunner runner = new LettuceScriptRunner(factory, Duration.ofMillis(100));
                runner.connect().get();
                ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner,
                        new RedisKeys("limiter"), null), new LocalBackend(TimeSource.monotonic(), 1_000),
                        new ResilientRedisBackend.Settings(FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 1_000),
                        TimeSource.monotonic(), (limit) -> { }, probe ? () -> {
                            runner.reconnectIfClosed();
                            runner.isScriptLoaded();
                            return true;
                        } : null);
                LimitDefinition limit = LimitDefinition.of("recovery", 1_000_000, Duration.ofSeconds(1), 10);
                backend.tryAcquire(limit, "k", 1);
                server.stop();
                long outageEnds = System.nanoTime() + Duration.ofSeconds(outageSeconds).toNanos();
                while (System.nanoTime() < outageEnds) {
                    backend.tryAcquire(limit, "k", 1);
                    Thread.sleep(100);
                }
                server.restart();
                long back = System.nanoTime();
                long fallbacks = backend.status().fallbackDecisions();
                while (true) {
                    if (probe) {
                        // No traffic: the probe alone must notice.
                        if (!backend.status().isFailing()) {
                            break;
                        }
                        Thread.sleep(10);
                    }
                    else {
                        backend.tryAcquire(limit, "k", 1);
                        if (backend.status().fallbackDecisions() == fallbacks) {
                            break;
                        }
                        fallbacks = backend.status().fallbackDecisions();
                        Thread.sleep(100);
                    }
                }
                System.out.printf(Locale.ROOT, "%-12s %10d %22d%n", probe ? "yes" : "no (traffic)", outageSeconds,
                        (System.nanoTime() - back) / 1_000_000);
                backend.close();
                factory.destroy();
            }
        }
    }

}
