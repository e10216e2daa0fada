package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.RedisExtension;
import io.slidinglimiter.testsupport.RedisServer;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances with leases, each with its own connection, many threads on one hot key, on real time
 * against a real redis-server. A call counts as admitted inside an interval only when it began and
 * returned inside it, both read on the wall clock that Redis's {@code TIME} also reads (to the
 * millisecond), so that a step of this machine's clock moves the test's windows and Redis's alike:
 * a CI run measured with {@code nanoTime} once saw a window all but empty, as if the wall clock had
 * jumped two seconds ahead. Fail-closed, so that a decision this loaded machine times out never admits.
 * Each failure message says how many decisions fell back, to tell an outage from the leases.
 */
class LeasesConcurrencyTests {

    private RedisServer server;

    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    private final List<ResilientRedisBackend> instances = new ArrayList<>();

    @BeforeEach
    void startRedis() {
        this.server = RedisServer.start();
    }

    @AfterEach
    void stop() {
        this.instances.forEach(ResilientRedisBackend::close);
        this.factories.forEach(LettuceConnectionFactory::destroy);
        this.server.close();
    }

    @Test
    void twoInstancesOfEightThreadsOnOneHotKeyStayWithinTheLimitAndAdmitMostOfIt() throws Exception {
        LimitDefinition limit = LimitDefinition.of("hot", 3_000, Duration.ofSeconds(2), 10);
        long intervalMillis = 2_000 - 200;
        ResilientRedisBackend first = instance();
        ResilientRedisBackend second = instance();
        // Start on a window boundary of the shared wall clock (Redis's and this JVM's), run three windows.
        long start = (System.currentTimeMillis() / 2_000 + 1) * 2_000;
        long end = start + 3 * 2_000;
        List<long[]> admitted = new ArrayList<>();
        AtomicLong decisions = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(16);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            ResilientRedisBackend instance = (t % 2 == 0) ? first : second;
            threads.add(new Thread(() -> {
                List<long[]> mine = new ArrayList<>();
                long calls = 0;
                try {
                    while (System.currentTimeMillis() < start) {
                        Thread.onSpinWait();
                    }
                    while (System.currentTimeMillis() < end) {
                        long before = System.currentTimeMillis();
                        boolean allowed = instance.tryAcquire(limit, "k", 1).allowed();
                        long after = System.currentTimeMillis();
                        calls++;
                        if (allowed) {
                            mine.add(new long[] { before, after });
                        }
                    }
                }
                catch (Throwable ex) {
                    failure.compareAndSet(null, ex);
                }
                finally {
                    synchronized (admitted) {
                        admitted.addAll(mine);
                    }
                    decisions.addAndGet(calls);
                    done.countDown();
                }
            }));
        }
        long scriptCallsBefore = this.server.scriptCalls();
        threads.forEach(Thread::start);
        done.await();
        long scriptCalls = this.server.scriptCalls() - scriptCallsBefore;
        assertThat(failure.get()).isNull();

        admitted.sort(Comparator.comparingLong((long[] call) -> call[0]));
        for (int i = 0; i < admitted.size(); i++) {
            long from = admitted.get(i)[0];
            long inside = 0;
            for (int j = i; j < admitted.size() && admitted.get(j)[0] < from + intervalMillis; j++) {
                if (admitted.get(j)[1] < from + intervalMillis) {
                    inside++;
                }
            }
            assertThat(inside).as("admitted in the 1.8 s from admission %d", i).isLessThanOrEqualTo(3_000);
        }
        for (int window = 0; window < 3; window++) {
            long from = start + window * 2_000L;
            long until = from + 2_000;
            long inWindow = admitted.stream().filter((call) -> call[0] >= from && call[1] < until).count();
            assertThat(inWindow).as("admitted in window %d (fallbacks %d and %d, slow %d and %d; leases %s and %s)",
                    window, first.status().fallbackDecisions(), second.status().fallbackDecisions(), first.status().slowDecisions(),
                    second.status().slowDecisions(), first.status().leaseCounts("hot"), second.status().leaseCounts("hot"))
                    .isGreaterThanOrEqualTo(2_400);
        }
        assertThat(scriptCalls).as("script calls for %d decisions", decisions.get())
                .isLessThanOrEqualTo(decisions.get() / 10);
        // Most decisions of a hammered key are denials, answered by the denial cache; the admissions alone
        // also take less than one script call in ten.
        assertThat(scriptCalls).as("script calls for %d admissions", admitted.size())
                .isLessThanOrEqualTo(admitted.size() / 10);
        assertThat(first.status().leaseCounts("hot").fromLease() + second.status().leaseCounts("hot").fromLease())
                .isGreaterThan(admitted.size() / 2);
    }

    @Test
    void aKeyWithLimitTenCalledTwentyTimesAtOnceAcrossTwoInstancesAdmitsExactlyTen() throws Exception {
        LimitDefinition limit = LimitDefinition.of("ten", 10, Duration.ofMinutes(1), 10);
        ResilientRedisBackend first = instance();
        ResilientRedisBackend second = instance();
        // Warm both instances' leases on the key first: they are what the twenty calls then meet.
        first.tryAcquire(limit.withLimit(1_000_000), "warm", 1);
        second.tryAcquire(limit.withLimit(1_000_000), "warm", 1);
        AtomicLong next = new AtomicLong();
        ConcurrentCalls calls = ConcurrentCalls.run(4, 5,
                () -> ((next.getAndIncrement() % 2 == 0) ? first : second).tryAcquire(limit, "k", 1).allowed());
        assertThat(calls.admitted()).hasValue(10);
        assertThat(first.usage(limit, "k").used()).isEqualTo(10);
    }

    @Test
    void anInstanceThatClosesGivesBackWhatItsLeasesHold() {
        LimitDefinition limit = LimitDefinition.of("held", 1_000, Duration.ofMinutes(1), 1);
        ResilientRedisBackend instance = instance();
        // A lease's size follows the rate this instance observed, which a busy host slows: call until one
        // holds permits (at least 30 calls), however long that takes here.
        int admitted = 0;
        while (admitted < 30 || !instance.status().leaseState("held", "k").held()) {
            assertThat(admitted).as("calls before a lease held permits").isLessThan(500);
            assertThat(instance.tryAcquire(limit, "k", 1).allowed()).isTrue();
            admitted++;
        }
        instance.close();
        String counted = this.server.call((commands) -> commands.hget("limiter:{k}:held", "t"));
        assertThat(counted).as("Redis's count once the instance closed").isEqualTo(Integer.toString(admitted));
    }

    private ResilientRedisBackend instance() {
        LettuceConnectionFactory factory = RedisExtension.connectionFactory(this.server.port());
        this.factories.add(factory);
        TimeSource clock = TimeSource.monotonic();
        // Sixteen busy threads share two cores with redis-server here: a timeout long enough that a
        // starved server is waited for rather than taken for an outage (which would fail closed).
        RedisBackend redis = new RedisBackend(new LettuceScriptRunner(factory, Duration.ofSeconds(2)),
                new RedisKeys("limiter"), null);
        ResilientRedisBackend instance = new ResilientRedisBackend(redis, new LocalBackend(clock, 1_000),
                new ResilientRedisBackend.Settings(FailurePolicy.FAIL_CLOSED, Map.of(), 3, 500, 10_000, (name) -> true),
                clock, (ignored) -> {
                });
        this.instances.add(instance);
        return instance;
    }

}
