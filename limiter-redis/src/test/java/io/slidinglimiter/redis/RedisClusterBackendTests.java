package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.lettuce.core.cluster.SlotHash;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.RedisClusterServers;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend on a three-master Cluster that the test starts itself.
 */
class RedisClusterBackendTests {

    private static RedisClusterServers cluster;

    private static LettuceConnectionFactory connectionFactory;

    private static LettuceScriptRunner runner;

    private static RedisBackend backend;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterServers.start();
        connectionFactory = connectionFactory(cluster);
        runner = new LettuceScriptRunner(connectionFactory, Duration.ofSeconds(5));
        backend = new RedisBackend(runner, new RedisKeys("limiter"), SlotHash::getSlot);
    }

    @AfterAll
    static void stopCluster() {
        connectionFactory.destroy();
        cluster.close();
    }

    static LettuceConnectionFactory connectionFactory(RedisClusterServers cluster) {
        RedisClusterConfiguration configuration = new RedisClusterConfiguration(
                cluster.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList());
        LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration);
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** Decisions for a key wait for its slot's call in flight and go together: exact all the same. */
    @Test
    void keysSpreadOverEveryMasterAndEachIsExactUnderSixteenThreads() throws Exception {
        LimitDefinition limit = LimitDefinition.of("spread", 200, Duration.ofMinutes(1), 10);
        List<String> keys = List.of("alpha", "bravo", "charlie", "delta", "echo", "foxtrot");
        ConcurrentCalls calls = ConcurrentCalls.run(16, 90,
                (thread, i) -> backend.tryAcquire(limit, keys.get(i % keys.size()), 1).allowed());
        assertThat(calls.admitted()).hasValue(200 * keys.size());
        assertThat(runner.batches().counts()[0]).as("batches of one slot's decisions").isPositive();
        for (RedisServer node : cluster.nodes()) {
            assertThat(node.<Long>call((redis) -> redis.dbsize())).as("keys on node %d", node.port()).isPositive();
        }
    }

    @Test
    void resetAllScansEveryMaster() {
        LimitDefinition limit = LimitDefinition.of("reset-all", 1, Duration.ofMinutes(1), 10);
        for (int i = 0; i < 300; i++) {
            backend.tryAcquire(limit, "key-" + i, 1);
        }
        backend.resetAll();
        for (RedisServer node : cluster.nodes()) {
            assertThat(node.<List<String>>call((redis) -> redis.keys("limiter:{*"))).as("node %d", node.port()).isEmpty();
        }
        assertThat(backend.tryAcquire(limit, "key-1", 1).allowed()).isTrue();
    }

    @Test
    void limitsInDifferentSlotsStayAllOrNothing() {
        LimitDefinition perUser = LimitDefinition.of("per-user", 5, Duration.ofMinutes(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10);
        RedisKeys redisKeys = new RedisKeys("limiter");
        assertThat(SlotHash.getSlot(redisKeys.counterKey("per-user", "zed")))
                .isNotEqualTo(SlotHash.getSlot(redisKeys.counterKey("global", "all")));
        List<String> users = List.of("zed", "amy", "bo");
        List<Boolean> outcomes = new ArrayList<>();
        for (String user : users) {
            Decisions decisions = backend.tryAcquireAll(List.of(new LimitRequest(perUser, user, 1),
                    new LimitRequest(global, "all", 1)));
            outcomes.add(decisions.allowed());
        }
        assertThat(outcomes).containsExactly(true, true, false);
        assertThat(backend.peek(perUser, "bo").remaining()).as("refunded or never taken").isEqualTo(5);
        assertThat(backend.peek(global, "all").remaining()).isZero();
    }

    @Test
    void aKeyLandsOnTheNodeThatOwnsTheSlotOfItsOwnTag() {
        LimitDefinition limit = LimitDefinition.of("tagged", 5, Duration.ofMinutes(1), 10);
        String userKey = "{evil}:x";
        backend.tryAcquire(limit, userKey, 1);
        byte[] redisKey = new RedisKeys("limiter").counterKey("tagged", userKey);
        int slot = SlotHash.getSlot(redisKey);
        assertThat(slot).isEqualTo(SlotHash.getSlot("\\(evil\\):x"));
        long holders = cluster.nodes().stream()
                .filter((node) -> node.<Long>call((redis) -> redis.clusterCountKeysInSlot(slot)) == 1)
                .count();
        assertThat(holders).isEqualTo(1);
    }


    /**
     * A call across a stalled shard and a healthy one counts its failures against the stalled
     * shard alone: the healthy shard keeps deciding in Redis, the call stops waiting for the stalled
     * one once its breaker is open, and what the healthy shard took for a call that failed is given
     * back.
     */
    @Test
    void aCallAcrossShardsCountsAFailureAgainstTheFailingShardOnly() throws Exception {
        try (RedisClusterServers own = RedisClusterServers.start()) {
            LettuceConnectionFactory factory = connectionFactory(own);
            // 250 ms: three of them (and the second of grace each) open the stalled shard's breaker early in
            // its stall, and a machine busy with other work does not make the healthy shard's calls time out.
            RedisBackend redis = new RedisBackend(new LettuceScriptRunner(factory, Duration.ofMillis(250)),
                    new RedisKeys("limiter"), SlotHash::getSlot);
            try (ResilientRedisBackend resilient = new ResilientRedisBackend(redis,
                    new LocalBackend(TimeSource.monotonic(), 1_000), new ResilientRedisBackend.Settings(
                            FailurePolicy.FAIL_OPEN, Map.of(), 3, 60_000, 0), TimeSource.monotonic(), (limit) -> { })) {
                LimitDefinition limit = LimitDefinition.of("across", 1_000_000, Duration.ofMinutes(1), 10);
                String healthy = RedisClusterServers.keyOnMaster(1);
                String sick = RedisClusterServers.keyOnMaster(0);
                List<LimitRequest> across = List.of(new LimitRequest(limit, healthy, 1),
                        new LimitRequest(limit, sick, 1));
                assertThat(resilient.tryAcquireAll(across).allowed()).isTrue();
                // Long enough that the calls sent before the breaker opens (three failures, each known a second
                // after its timeout) time out more than that second before the node wakes, on a busy machine
                // too (a reply within that second proves the node answering, and what fail-open admitted is
                // then rightly reported to it at once); shorter than the cluster's 5 s node timeout.
                Thread sleeper = new Thread(() -> own.nodes().get(0).stall(4));
                sleeper.start();
                RedisServer.sleepMillis(100);
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (resilient.status().openShards().isEmpty()) {
                    assertThat(System.nanoTime()).as("a breaker opened").isLessThan(deadline);
                    resilient.tryAcquireAll(across);
                    RedisServer.sleepMillis(20);
                }
                assertThat(resilient.status().openShards()).containsExactly(redis.shardOf(limit, sick));
                long healthyScripts = own.nodes().get(1).scriptCalls();
                long fallbacks = resilient.status().fallbackDecisions();
                assertThat(resilient.tryAcquireAll(across).allowed()).isTrue();
                assertThat(resilient.status().fallbackDecisions()).as("the call across fell back").isEqualTo(fallbacks + 2);
                assertThat(own.nodes().get(1).scriptCalls()).as("sent nowhere").isEqualTo(healthyScripts);
                assertThat(resilient.tryAcquire(limit, healthy, 1).allowed()).isTrue();
                assertThat(resilient.status().fallbackDecisions()).as("the healthy shard decides in Redis")
                        .isEqualTo(fallbacks + 2);
                // Every fallback here was a call across, admitted by fail-open for both keys: each shard is told
                // of its keys once it answers, the healthy one at once (one call for its key); the stalled one
                // only after its breaker lets a call through again (not within this test's minute).
                long admittedByFallback = resilient.status().fallbackDecisions() / 2;
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                        assertThat(own.nodes().get(1).scriptCalls()).as("the decision, then the report of its key")
                                .isEqualTo(healthyScripts + 2));
                sleeper.join();
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                    assertThat(redis.peek(limit, healthy).remaining())
                            .as("the healthy key: the first call, the last, and what fail-open admitted")
                            .isEqualTo(limit.limit() - 2 - admittedByFallback);
                    assertThat(redis.peek(limit, sick).remaining())
                            .as("the stalled key: the first call; what fail-open admitted waits for its shard")
                            .isEqualTo(limit.limit() - 1);
                });
            }
            finally {
                factory.destroy();
            }
        }
    }

}
