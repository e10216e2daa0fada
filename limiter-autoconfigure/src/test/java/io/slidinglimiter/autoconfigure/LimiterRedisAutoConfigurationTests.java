package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import io.slidinglimiter.RateLimitExceededException;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.RoutingBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.redis.LettuceScriptRunner;
import io.slidinglimiter.testsupport.RedisClusterServers;
import io.slidinglimiter.testsupport.RedisSentinelServers;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Application contexts ("instances") sharing a real redis-server, or a three-master Cluster, that
 * the test starts on ports of its own.
 */
@ExtendWith(OutputCaptureExtension.class)
class LimiterRedisAutoConfigurationTests {

    private static RedisServer server;

    private static RedisClusterServers cluster;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, AopAutoConfiguration.class,
                    LimiterRedisAutoConfiguration.class, LimiterAutoConfiguration.class,
                    LimiterAopAutoConfiguration.class))
            // A generous timeout: these tests are about sharing, not about a slow first connection.
            .withPropertyValues("limiter.backend=redis", "limiter.redis.timeout=5s", "limiter.limits.shared.limit=1000",
                    "limiter.limits.shared.window=1m", "limiter.limits.per-user.limit=3",
                    "limiter.limits.per-user.window=1m", "limiter.limits.global.limit=5",
                    "limiter.limits.global.window=1m", "limiter.limits.here.limit=2", "limiter.limits.here.window=1m",
                    "limiter.limits.here.backend=local");

    @BeforeAll
    static void startRedis() {
        server = RedisServer.start();
        cluster = RedisClusterServers.start();
    }

    @AfterAll
    static void stopRedis() {
        server.close();
        cluster.close();
    }

    /**
     * Spring Boot's own spring.data.redis.sentinel.* is the only setup; a stalled master's promotion
     * is followed while it sleeps, also with Lettuce connection pooling on (commons-pool2 present),
     * where resetting the factory's shared connection hands the same one back; nothing reaches the
     * old master after it wakes.
     */
    @Test
    void underSentinelTheLimiterFollowsAStalledMastersPromotionWithPooledConnections() {
        try (RedisSentinelServers sentinel = RedisSentinelServers.start()) {
            this.runner.withPropertyValues("spring.data.redis.sentinel.master=" + RedisSentinelServers.MASTER,
                    "spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelNodes()),
                    "spring.data.redis.lettuce.pool.enabled=true", "limiter.redis.timeout=100ms").run((context) -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(SentinelPromotions.class).isFollowing())
                                .isTrue();
                        RateLimiters limiters = context.getBean(RateLimiters.class);
                        LimiterRedisAutoConfiguration.LimiterRedis redis = context
                                .getBean(LimiterRedisAutoConfiguration.LimiterRedis.class);
                        assertThat(limiters.tryAcquire("shared", "k").allowed()).isTrue();
                        Thread sleeper = new Thread(() -> sentinel.master().stall(8));
                        sleeper.start();
                        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        while (replicaScriptCalls(sentinel) == 0 || redis.backend().status().isCircuitOpen()) {
                            assertThat(System.nanoTime()).as("decisions reach the promoted replica").isLessThan(deadline);
                            limiters.tryAcquire("shared", "k");
                            Thread.sleep(20);
                        }
                        assertThat(sleeper.isAlive()).as("the old master still sleeps").isTrue();
                        sleeper.join();
                        long ranOnceAwake = sentinel.master().scriptCalls();
                        for (int i = 0; i < 20; i++) {
                            limiters.tryAcquire("shared", "k");
                            Thread.sleep(10);
                        }
                        assertThat(sentinel.master().scriptCalls()).as("scripts the demoted master ran after it woke")
                                .isEqualTo(ranOnceAwake);
                    });
        }
    }

    /**
     * With Spring Boot's cluster defaults and nothing else, decisions for a killed master's slots
     * reach its promoted replica within two seconds of the promotion (SPEC §6).
     */
    @Test
    void onClusterTheLimiterFollowsAPromotedReplica() {
        try (RedisClusterServers replicated = RedisClusterServers.startWithReplicas()) {
            onCluster(replicated).withPropertyValues("limiter.redis.timeout=100ms").run((context) -> {
                        assertThat(context).hasNotFailed();
                        RateLimiters limiters = context.getBean(RateLimiters.class);
                        LimiterRedisAutoConfiguration.LimiterRedis redis = context
                                .getBean(LimiterRedisAutoConfiguration.LimiterRedis.class);
                        String key = RedisClusterServers.keyOnMaster(0);
                        assertThat(limiters.tryAcquire("shared", key).allowed()).isTrue();
                        RedisServer promoted = replicated.replicas().get(0);
                        replicated.nodes().get(0).kill();
                        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        long promotedAt = 0;
                        long decidedAt = 0;
                        while (decidedAt == 0) {
                            assertThat(System.nanoTime()).as("decisions reach the promoted replica").isLessThan(deadline);
                            if (promotedAt == 0 && RedisClusterServers.isMaster(promoted)) {
                                promotedAt = System.nanoTime();
                            }
                            long fallbacks = redis.backend().status().fallbackDecisions();
                            limiters.tryAcquire("shared", key);
                            if (promotedAt != 0 && redis.backend().status().fallbackDecisions() == fallbacks) {
                                decidedAt = System.nanoTime();
                            }
                            Thread.sleep(10);
                        }
                        assertThat(promoted.scriptCalls()).isPositive();
                        assertThat(Duration.ofNanos(decidedAt - promotedAt)).as("after the promotion")
                                .isLessThanOrEqualTo(Duration.ofSeconds(2));
                    });
        }
    }

    /**
     * A stalled master (DEBUG SLEEP) keeps its socket open: its shard's decisions follow the policy,
     * while keys on the healthy masters keep deciding in Redis throughout (each shard has its own
     * breaker); the shard's decisions reach the promoted replica within two seconds while the old
     * master still sleeps, with Spring Boot's defaults (Lettuce's own topology refresh would wait a
     * minute for the sleeping node); nothing is sent to it after that, and the decisions it had
     * received while asleep change nothing when it wakes: the promoted master counts exactly the
     * calls that were admitted, by Redis or (fail-open, reported once Redis answered) by the policy.
     */
    @Test
    void onClusterAStalledMasterStopsOnlyItsOwnShard() throws Exception {
        try (RedisClusterServers replicated = RedisClusterServers.startWithReplicas()) {
            onCluster(replicated).withPropertyValues("limiter.redis.timeout=100ms", "limiter.limits.few.limit=100000",
                    "limiter.limits.few.window=1m").run((context) -> {
                        assertThat(context).hasNotFailed();
                        RateLimiters limiters = context.getBean(RateLimiters.class);
                        LimiterRedisAutoConfiguration.LimiterRedis redis = context
                                .getBean(LimiterRedisAutoConfiguration.LimiterRedis.class);
                        String sick = RedisClusterServers.keyOnMaster(0);
                        List<String> healthy = List.of(RedisClusterServers.keyOnMaster(1), RedisClusterServers.keyOnMaster(2));
                        assertThat(limiters.tryAcquire("few", sick).allowed()).isTrue();
                        int admittedSick = 1;
                        healthy.forEach((key) -> limiters.tryAcquire("shared", key));
                        RedisServer stalled = replicated.nodes().get(0);
                        RedisServer promoted = replicated.replicas().get(0);
                        Thread sleeper = new Thread(() -> stalled.stall(8));
                        sleeper.start();
                        long promotedAt = 0;
                        long decidedAt = 0;
                        int healthyDecisions = 0;
                        int healthyFallbacks = 0;
                        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        while (decidedAt == 0) {
                            assertThat(System.nanoTime()).as("decisions reach the promoted replica").isLessThan(deadline);
                            for (String key : healthy) {
                                long fallbacks = redis.backend().status().fallbackDecisions();
                                limiters.tryAcquire("shared", key);
                                healthyDecisions++;
                                healthyFallbacks += (int) (redis.backend().status().fallbackDecisions() - fallbacks);
                            }
                            if (promotedAt == 0 && RedisClusterServers.isMaster(promoted)) {
                                promotedAt = System.nanoTime();
                            }
                            long fallbacks = redis.backend().status().fallbackDecisions();
                            admittedSick += limiters.tryAcquire("few", sick).allowed() ? 1 : 0;
                            if (promotedAt != 0 && redis.backend().status().fallbackDecisions() == fallbacks) {
                                decidedAt = System.nanoTime();
                            }
                            Thread.sleep(10);
                        }
                        assertThat(sleeper.isAlive()).as("the old master still sleeps").isTrue();
                        assertThat(Duration.ofNanos(decidedAt - promotedAt)).as("after the promotion")
                                .isLessThanOrEqualTo(Duration.ofSeconds(2));
                        assertThat(healthyDecisions - healthyFallbacks).as("of %d decisions on healthy masters",
                                healthyDecisions).isGreaterThanOrEqualTo(healthyDecisions * 9 / 10);
                        sleeper.join();
                        long ranOnceAwake = stalled.scriptCalls();
                        Thread.sleep(500);
                        for (int i = 0; i < 5; i++) {
                            assertThat(limiters.tryAcquire("few", sick).allowed()).as("after the old master woke")
                                    .isTrue();
                            admittedSick++;
                            assertThat(redis.backend().status().isCircuitOpen()).isFalse();
                        }
                        assertThat(stalled.scriptCalls()).as("scripts the demoted master ran after it woke")
                                .isEqualTo(ranOnceAwake);
                        long admitted = admittedSick;
                        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                                assertThat(limiters.usage("few", sick).used())
                                        .as("the promoted master's count: every call admitted, none of the late ones")
                                        .isEqualTo(admitted));
                    });
        }
    }

    /** The promoted replica's script calls; 0 while it drops its clients to change its role. */
    private static long replicaScriptCalls(RedisSentinelServers sentinel) {
        try {
            return sentinel.replica().scriptCalls();
        }
        catch (io.lettuce.core.RedisException ex) {
            return 0;
        }
    }

    private ApplicationContextRunner standalone() {
        return this.runner.withPropertyValues("spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + server.port());
    }

    private ApplicationContextRunner onCluster() {
        return onCluster(cluster);
    }

    private ApplicationContextRunner onCluster(RedisClusterServers servers) {
        return this.runner.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",",
                servers.nodes().stream().map((node) -> "127.0.0.1:" + node.port()).toList()));
    }

    @Test
    void limitsGoToRedisOrStayLocalAsConfigured() {
        standalone().run((context) -> {
            assertThat(context).hasNotFailed();
            RoutingBackend backend = (RoutingBackend) context.getBean(RateLimitBackend.class);
            RateLimiters limiters = context.getBean(RateLimiters.class);
            assertThat(backend.backendFor(limiters.definition("here"))).isInstanceOf(LocalBackend.class);
            assertThat(backend.backendFor(limiters.definition("shared"))).isNotInstanceOf(LocalBackend.class);
        });
    }

    @Test
    void decisionsAreBatchedUnlessTurnedOff() {
        standalone().run((context) -> assertThat(context.getBean(LettuceScriptRunner.class).isBatching()).isTrue());
        standalone().withPropertyValues("limiter.redis.batching=false")
                .run((context) -> assertThat(context.getBean(LettuceScriptRunner.class).isBatching()).isFalse());
    }

    @Test
    void twoInstancesOnOneRedisAdmitExactlyTheLimitInAll() throws Exception {
        assertTwoInstancesShareOneLimit(standalone(), List.of("one-key"));
    }

    @Test
    void twoInstancesOnAClusterAdmitExactlyTheLimitForEachKeyOnEveryMaster() throws Exception {
        List<String> keys = List.of("alpha", "bravo", "charlie", "delta", "echo", "foxtrot");
        assertTwoInstancesShareOneLimit(onCluster(), keys);
        for (RedisServer node : cluster.nodes()) {
            assertThat(node.<Long>call((redis) -> redis.dbsize())).isPositive();
        }
    }

    private void assertTwoInstancesShareOneLimit(ApplicationContextRunner runner, List<String> keys) throws Exception {
        runner.run((first) -> runner.run((second) -> {
            RateLimiters[] instances = { first.getBean(RateLimiters.class), second.getBean(RateLimiters.class) };
            ConcurrentCalls calls = ConcurrentCalls.run(32, 70 * keys.size(),
                    (thread, i) -> instances[thread % 2].tryAcquire("shared", keys.get(i % keys.size())).allowed());
            assertThat(calls.admitted()).hasValue(1000 * keys.size());
        }));
    }

    @Test
    void aTwoLimitMethodAcrossClusterSlotsStaysAllOrNothing() {
        onCluster().withUserConfiguration(Transfers.class).run((context) -> {
            Transfers transfers = context.getBean(Transfers.class);
            RateLimiters limiters = context.getBean(RateLimiters.class);
            for (int i = 0; i < 5; i++) {
                transfers.transfer("user-" + i);
            }
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> transfers.transfer("late"))
                    .satisfies((denied) -> assertThat(denied.getLimitName()).isEqualTo("global"));
            assertThat(limiters.tryAcquire("per-user", "late").remaining()).as("refunded").isEqualTo(2);
            assertThat(transfers.made()).isEqualTo(5);
        });
    }

    @Test
    void aMethodMixingLocalAndRedisLimitsRefundsTheLocalOneWhenRedisRejects() {
        standalone().withUserConfiguration(Mixed.class).run((context) -> {
            Mixed mixed = context.getBean(Mixed.class);
            RateLimiters limiters = context.getBean(RateLimiters.class);
            limiters.tryAcquire("global", "*", 5);
            assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(mixed::call);
            assertThat(limiters.tryAcquire("here", "*").remaining()).as("local refunded").isEqualTo(1);
        });
    }

    @Test
    void anInstanceWhoseClockIsTenMinutesFastAgreesExactly() {
        ManualTimeSource fast = new ManualTimeSource(System.currentTimeMillis() + Duration.ofMinutes(10).toMillis());
        standalone().run((normal) -> standalone().withBean(ManualTimeSource.class, () -> fast).run((skewed) -> {
            RateLimiters a = normal.getBean(RateLimiters.class);
            RateLimiters b = skewed.getBean(RateLimiters.class);
            List<Boolean> outcomes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                outcomes.add(((i % 2 == 0) ? a : b).tryAcquire("per-user", "skewed").allowed());
            }
            assertThat(outcomes).containsExactly(true, true, true, false, false);
            // Both wait for the same Redis-time slot: only the moments of asking differ, not ten minutes.
            Duration waitA = a.tryAcquire("per-user", "skewed").retryAfter();
            Duration waitB = b.tryAcquire("per-user", "skewed").retryAfter();
            assertThat(waitA.minus(waitB).abs()).isLessThan(Duration.ofSeconds(1));
            assertThat(waitA).isLessThanOrEqualTo(Duration.ofMinutes(1));
        }));
    }

    /**
     * Spring reads every method of an auto-configuration class when it starts: none of this one's may
     * name a Micrometer type outside a class that only loads with Micrometer there. Checked in a class
     * loader of the test class path without micrometer-core (a filtering class loader cannot show it:
     * the class is already defined by one that sees Micrometer).
     */
    @Test
    void theRedisAutoConfigurationCanBeReadWithoutMicrometer() throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<java.net.URL> urls = new java.util.ArrayList<>();
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            if (!entry.contains("micrometer-core")) {
                urls.add(new java.io.File(entry).toURI().toURL());
            }
        }
        try (java.net.URLClassLoader loader = new java.net.URLClassLoader(urls.toArray(java.net.URL[]::new),
                ClassLoader.getPlatformClassLoader())) {
            assertThat(loader.loadClass(LimiterRedisAutoConfiguration.class.getName()).getDeclaredMethods())
                    .isNotEmpty();
        }
    }

    @Test
    void redisWithoutSpringDataRedisFailsTheStartNamingTheDependency() {
        this.runner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce"))
                .run((context) -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new FailureAnalysisAccess().analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("limiter.backend")
                            .contains("Spring Data Redis with Lettuce is not on the class path");
                    assertThat(analysis.getAction()).contains("spring-boot-starter-data-redis");
                });
    }

    @Test
    void anUnreachableRedisAtStartIsOneClearLogLineAndThePolicyDecides(CapturedOutput output) {
        this.runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1",
                "limiter.redis.on-failure=fail-closed", "limiter.redis.timeout=100ms").run((context) -> {
                    assertThat(context).hasNotFailed();
                    RateLimiters limiters = context.getBean(RateLimiters.class);
                    assertThat(limiters.tryAcquire("shared", "k").allowed()).isFalse();
                    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
                    while (!output.getAll().contains("could not connect to Redis at")
                            && System.nanoTime() < deadline) {
                        Thread.sleep(50);
                    }
                    // The line names the address it tried, and what decides meanwhile.
                    assertThat(output.getAll())
                            .contains("Sliding Limiter could not connect to Redis at 127.0.0.1:1 at start")
                            .contains("limiter.redis.on-failure=fail-closed");
                });
    }

    @Test
    void badRedisSettingsFailTheStartNamingTheProperty() {
        Consumer<String[]> fails = (properties) -> standalone().withPropertyValues(properties).run((context) -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new FailureAnalysisAccess().analyze(context.getStartupFailure());
            assertThat(analysis).as("analysis of %s", context.getStartupFailure()).isNotNull();
            assertThat(analysis.getDescription()).contains(properties[0].substring(0, properties[0].indexOf('=')));
        });
        fails.accept(new String[] { "limiter.redis.timeout=-1ms" });
        fails.accept(new String[] { "limiter.redis.failure-threshold=0" });
        fails.accept(new String[] { "limiter.redis.open-for=0s" });
        standalone().withPropertyValues("limiter.redis.on-failure=retry").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("retry");
        });
        standalone().withPropertyValues("limiter.limits.shared.on-failure=maybe").run((context) ->
                assertThat(context).hasFailed());
    }

    @Configuration(proxyBeanMethods = false)
    static class Transfers {

        private final AtomicInteger count = new AtomicInteger();

        public int made() {
            return this.count.get();
        }

        @RateLimited(name = "per-user", key = "#user")
        @RateLimited(name = "global")
        public void transfer(String user) {
            this.count.incrementAndGet();
        }

    }

    @Configuration(proxyBeanMethods = false)
    static class Mixed {

        @RateLimited(name = "here")
        @RateLimited(name = "global")
        public void call() {
        }

    }

}
