package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.ConcurrentCalls;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend on a three-master Cluster that the test starts itself.
 */
class RedisClusterBackendTest {

    private static RedisClusterServers cluster;

    private static LettuceConnectionFactory connectionFactory;

    private static RedisBackend backend;

    @BeforeAll
    static void startCluster() {
        cluster = RedisClusterServers.start();
        connectionFactory = connectionFactory(cluster);
        backend = new RedisBackend(new LettuceScriptRunner(connectionFactory, Duration.ofSeconds(5)),
                new RedisKeys("limiter"), ClusterSlotHashUtil::calculateSlot);
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

    @Test
    void keysSpreadOverEveryMasterAndEachIsExactUnderSixteenThreads() throws Exception {
        LimitDefinition limit = LimitDefinition.of("spread", 200, Duration.ofMinutes(1), 10);
        List<String> keys = List.of("alpha", "bravo", "charlie", "delta", "echo", "foxtrot");
        ConcurrentCalls calls = ConcurrentCalls.run(16, 90,
                (thread, i) -> backend.tryAcquire(limit, keys.get(i % keys.size()), 1));
        assertThat(calls.admitted()).hasValue(200 * keys.size());
        for (RedisServer node : cluster.nodes()) {
            assertThat(node.<Long>call((redis) -> redis.dbsize())).as("keys on node %d", node.port()).isPositive();
        }
    }

    @Test
    void limitsInDifferentSlotsStayAllOrNothing() {
        LimitDefinition perUser = LimitDefinition.of("per-user", 5, Duration.ofMinutes(1), 10);
        LimitDefinition global = LimitDefinition.of("global", 2, Duration.ofMinutes(1), 10);
        RedisKeys redisKeys = new RedisKeys("limiter");
        assertThat(ClusterSlotHashUtil.calculateSlot(redisKeys.counterKey("per-user", "zed")))
                .isNotEqualTo(ClusterSlotHashUtil.calculateSlot(redisKeys.counterKey("global", "all")));
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
        int slot = ClusterSlotHashUtil.calculateSlot(redisKey);
        assertThat(slot).isEqualTo(ClusterSlotHashUtil.calculateSlot("\\(evil\\):x"));
        long holders = cluster.nodes().stream()
                .filter((node) -> node.<Long>call((redis) -> redis.clusterCountKeysInSlot(slot)) == 1)
                .count();
        assertThat(holders).isEqualTo(1);
    }

}
