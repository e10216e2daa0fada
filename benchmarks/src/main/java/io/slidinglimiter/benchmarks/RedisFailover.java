package io.slidinglimiter.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import io.lettuce.core.RedisURI;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.redis.RedisBackend;
import io.slidinglimiter.redis.RedisKeys;
import io.slidinglimiter.redis.ResilientRedisBackend;
import io.slidinglimiter.redis.SentinelFollower;
import io.slidinglimiter.testsupport.RedisSentinelServers;

/**
 * Over-admission across a Sentinel failover caused by a stalled master, per failure policy: a
 * steady caller at twice a limit of 50 per 10 s (one call every 100 ms) for 40 s, the master put
 * to sleep ({@code DEBUG SLEEP 15}) at 10 s, Sentinel (quorum 2, down after 1 s) promoting the
 * replica, the wired backend following it. Reports the most calls admitted in any 10 s interval.
 * Starts its own master, replica and three sentinels on free ports for each policy.
 * <pre>
 * java -cp ... io.slidinglimiter.benchmarks.RedisFailover
 * </pre>
 */
public final class RedisFailover {

    private RedisFailover() {
    }

    public static void main(String[] args) throws Exception {
        System.out.printf(Locale.ROOT, "%-12s %9s %9s %22s %22s%n", "policy", "calls", "admitted",
                "most in any 10 s", "most in any 9 s (W-W/N)");
        for (FailurePolicy policy : new FailurePolicy[] { FailurePolicy.FAIL_CLOSED, FailurePolicy.LOCAL,
                FailurePolicy.FAIL_OPEN }) {
            try (RedisSentinelServers servers = RedisSentinelServers.start()) {
                RedisSentinelConfiguration configuration = new RedisSentinelConfiguration(RedisSentinelServers.MASTER,
                        Set.copyOf(servers.sentinelNodes()));
                LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration);
                factory.afterPropertiesSet();
                factory.start();
                LettuceScriptRunner runner = new LettuceScriptRunner(factory, Duration.ofMillis(100));
                runner.connect().get();
                ResilientRedisBackend backend = new ResilientRedisBackend(new RedisBackend(runner,
                        new RedisKeys("limiter"), null), new LocalBackend(TimeSource.monotonic(), 10_000),
                        new ResilientRedisBackend.Settings(policy, Map.of(), 3, 1_000, 100_000), TimeSource.monotonic(),
                        (limit) -> { });
                SentinelFollower follower = SentinelFollower.forLimiter(runner, backend, RedisSentinelServers.MASTER,
                        configuration.getSentinels().stream()
                        .map((node) -> RedisURI.create(node.getHost(), node.getPort())).toList());
                LimitDefinition limit = LimitDefinition.of("failover", 50, Duration.ofSeconds(10), 10);
                List<Long> admitted = new ArrayList<>();
                long start = System.nanoTime();
                Thread sleeper = null;
                int calls = 0;
                while (System.nanoTime() - start < Duration.ofSeconds(40).toNanos()) {
                    if (sleeper == null && System.nanoTime() - start > Duration.ofSeconds(10).toNanos()) {
                        sleeper = new Thread(() -> servers.master().stall(15));
                        sleeper.start();
                    }
                    long before = System.nanoTime();
                    if (backend.tryAcquire(limit, "caller", 1).allowed()) {
                        admitted.add(before);
                    }
                    calls++;
                    long next = start + calls * 100_000_000L;
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                }
                System.out.printf(Locale.ROOT, "%-12s %9d %9d %22d %22d%n", policy.id(), calls, admitted.size(),
                        HttpFailover.mostWithin(admitted, Duration.ofSeconds(10)),
                        HttpFailover.mostWithin(admitted, Duration.ofSeconds(9)));
                if (sleeper != null) {
                    sleeper.join();
                }
                follower.close();
                backend.close();
                factory.destroy();
            }
        }
    }

}
