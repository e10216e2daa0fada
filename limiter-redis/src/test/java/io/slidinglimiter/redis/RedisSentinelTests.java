package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.RedisSentinelServers;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A master, a replica and three sentinels (quorum 2, down after one second) that the test starts on
 * free ports; the limiter connects as Spring Boot's {@code spring.data.redis.sentinel.*} would.
 * Real time: Sentinel decides on its own clock.
 */
class RedisSentinelTests {

    private static final String MASTER = RedisSentinelServers.MASTER;

    private RedisSentinelServers servers;

    @BeforeEach
    void startServers() {
        this.servers = RedisSentinelServers.start();
    }

    @AfterEach
    void stopServers() {
        this.servers.close();
    }

    /** SPEC §6: decisions follow a promotion within a second of Sentinel announcing it. */
    @Test
    void aKilledMastersDecisionsMoveToThePromotedReplicaWithinASecond() throws Exception {
        try (Limiter limiter = new Limiter(this.servers)) {
            assertThat(limiter.decide("before")).isTrue();
            this.servers.master().kill();
            Duration afterAnnouncement = limiter.untilDecidedAfterTheSwitch();
            assertThat(this.servers.replica().scriptCalls()).as("scripts the promoted replica ran").isPositive();
            assertThat(afterAnnouncement).as("first decision on the new master after +switch-master")
                    .isLessThanOrEqualTo(Duration.ofSeconds(1));
        }
    }

    /**
     * A stalled master (DEBUG SLEEP: a long fork, swapping) keeps its socket open, so only the
     * announcement moves the connection. Nothing is sent to it after that: once awake it runs only
     * the decisions it had received while asleep, and those change nothing.
     */
    @Test
    void aStalledMastersDecisionsMoveToThePromotedReplicaAndItsLateOnesChangeNothing() throws Exception {
        try (Limiter limiter = new Limiter(this.servers)) {
            assertThat(limiter.decide("stalled")).isTrue();
            String before = this.servers.master().call((redis) -> redis.hget("limiter:{stalled}:failover", "t"));
            Thread sleeper = new Thread(() -> this.servers.master().stall(8));
            sleeper.start();
            RedisServer.sleepMillis(200);
            Duration afterAnnouncement = limiter.untilDecidedAfterTheSwitch("stalled");
            assertThat(sleeper.isAlive()).as("the old master still sleeps").isTrue();
            assertThat(afterAnnouncement).as("first decision on the new master after +switch-master")
                    .isLessThanOrEqualTo(Duration.ofSeconds(1));
            sleeper.join();
            assertThat(this.servers.master().<String>call((redis) -> redis.hget("limiter:{stalled}:failover", "t")))
                    .as("the woken master's count of the key").isEqualTo(before);
            long ranOnceAwake = this.servers.master().scriptCalls();
            for (int i = 0; i < 20; i++) {
                limiter.decide("stalled");
                RedisServer.sleepMillis(10);
            }
            assertThat(this.servers.master().scriptCalls()).as("scripts the demoted master ran after it woke")
                    .isEqualTo(ranOnceAwake);
            // Nothing admitted is lost: what fail-open admitted during the stall is counted once Redis answers.
            long admitted = limiter.decidedInRedis.get("stalled") + limiter.admittedByFallback.getOrDefault("stalled", 0);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                    assertThat(limiter.countInRedis("stalled"))
                            .as("the new master's count: the decisions Redis made and what fallbacks admitted")
                            .isEqualTo(admitted));
        }
    }

    /** The limiter as the starter wires it under Sentinel, and a listener of the announcements. */
    private static final class Limiter implements AutoCloseable {

        private final LettuceConnectionFactory factory;

        private final ResilientRedisBackend backend;

        private final SentinelFollower follower;

        private final RedisClient listener = RedisClient.create();

        private final StatefulRedisPubSubConnection<String, String> announcements;

        private final AtomicLong switchedAt = new AtomicLong();

        private final LimitDefinition limit = LimitDefinition.of("failover", 1_000_000, Duration.ofMinutes(1), 10);

        Limiter(RedisSentinelServers servers) throws Exception {
            RedisSentinelConfiguration configuration = new RedisSentinelConfiguration(MASTER,
                    Set.copyOf(servers.sentinelNodes()));
            this.factory = new LettuceConnectionFactory(configuration);
            this.factory.afterPropertiesSet();
            this.factory.start();
            LettuceScriptRunner runner = new LettuceScriptRunner(this.factory, Duration.ofMillis(100));
            runner.connect().get();
            this.backend = new ResilientRedisBackend(new RedisBackend(runner, new RedisKeys("limiter"), null),
                    new LocalBackend(TimeSource.monotonic(), 1_000), new ResilientRedisBackend.Settings(
                            FailurePolicy.FAIL_OPEN, Map.of(), 3, 1_000, 1_000), TimeSource.monotonic(), (limit) -> { });
            this.announcements = this.listener.connectPubSub(RedisURI.create("127.0.0.1",
                    servers.sentinels().get(2).port()));
            this.announcements.addListener(new RedisPubSubAdapter<>() {

                @Override
                public void message(String channel, String message) {
                    Limiter.this.switchedAt.compareAndSet(0, System.nanoTime());
                }

            });
            this.announcements.sync().subscribe(SentinelFollower.SWITCH_MASTER);
            this.follower = SentinelFollower.forLimiter(runner, this.backend, MASTER,
                    configuration.getSentinels().stream()
                    .map((node) -> RedisURI.create(node.getHost(), node.getPort())).toList());
        }

        /** Decisions Redis made (rather than the failure policy), by key. */
        private final Map<String, Integer> decidedInRedis = new java.util.HashMap<>();

        /** Calls the failure policy (fail-open) admitted, by key. */
        private final Map<String, Integer> admittedByFallback = new java.util.HashMap<>();

        boolean decide(String key) {
            long fallbacks = this.backend.status().fallbackDecisions();
            boolean allowed = this.backend.tryAcquire(this.limit, key, 1).allowed();
            if (this.backend.status().fallbackDecisions() == fallbacks) {
                this.decidedInRedis.merge(key, 1, Integer::sum);
            }
            else if (allowed) {
                this.admittedByFallback.merge(key, 1, Integer::sum);
            }
            return allowed;
        }

        /** What the new master counts for a key: every admission, by Redis or by the failure policy. */
        long countInRedis(String key) {
            return this.limit.limit() - this.backend.peek(this.limit, key).remaining();
        }

        Duration untilDecidedAfterTheSwitch() {
            return untilDecidedAfterTheSwitch("after");
        }

        /** Decides every 10 ms until a decision reaches Redis after the announcement; its delay. */
        Duration untilDecidedAfterTheSwitch(String key) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                assertThat(System.nanoTime()).as("decisions reached the promoted replica").isLessThan(deadline);
                long fallbacks = this.backend.status().fallbackDecisions();
                decide(key);
                long switched = this.switchedAt.get();
                if (switched != 0 && this.backend.status().fallbackDecisions() == fallbacks) {
                    return Duration.ofNanos(System.nanoTime() - switched);
                }
                RedisServer.sleepMillis(10);
            }
        }

        @Override
        public void close() {
            this.follower.close();
            this.announcements.close();
            this.listener.shutdown();
            this.backend.close();
            this.factory.destroy();
        }

    }

}
