package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.local.WindowCounterPropertiesTests.SlotModel;
import io.slidinglimiter.local.WindowCounterPropertiesTests;
import io.slidinglimiter.testsupport.RedisExtension;
import io.slidinglimiter.testsupport.RedisServer;
import io.slidinglimiter.failover.LeaseCounts;
import io.slidinglimiter.failover.LeaseGrant;
import io.slidinglimiter.failover.LeaseState;
import io.slidinglimiter.failover.Leases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leases against a real redis-server, on a schedule: every instance's clock and the scripts' time
 * are one manual clock, give-backs run before the call that caused them returns, and leases that
 * end without traffic are given back when the test sweeps.
 */
class LeasesTests {

    private static final long START = 1_800_000_000_000L;

    private static final int SEEDS = Integer.getInteger("limiter.seeds", 40);

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perClass();

    private static LettuceScriptRunner lettuce;

    private final ManualTimeSource clock = new ManualTimeSource(START);

    @BeforeAll
    static void createRunner() {
        lettuce = new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5));
    }

    @Test
    void aHotKeyIsAdmittedFromItsLeaseWithoutRoundTrips() {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientRedisBackend instance = instance();
        assertThat(instance.tryAcquire(limit, "k", 1).remaining()).isEqualTo(999);
        this.clock.advanceMillis(10);
        long calls = redis.server().scriptCalls();
        // One call in the 10 ms before: 0.1 a millisecond, 990 ms left in the sub-window: 99 more.
        Decision taking = instance.tryAcquire(limit, "k", 1);
        assertThat(taking.allowed()).isTrue();
        assertThat(taking.remaining()).as("the lease's permits are not used yet").isEqualTo(998);
        assertThat(instance.status().leaseState("api", "k").left()).isEqualTo(99);
        for (int i = 1; i <= 99; i++) {
            Decision decision = instance.tryAcquire(limit, "k", 1);
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(998 - i);
        }
        // Below a quarter left (23 of 99), a top-up in the background: 77 used in no time is a high rate,
        // so it asks for the limit and Redis gives half of what is left, (1000 - 101) / 2.
        assertThat(redis.server().scriptCalls() - calls).as("script calls for 100 decisions").isEqualTo(2);
        assertThat(instance.status().leaseState("api", "k"))
                .isEqualTo(new LeaseState(true, 449, 549, 988));
        assertThat(instance.usage(limit, "k").used()).isEqualTo(101 + 449);
        assertThat(instance.status().leaseCounts("api")).isEqualTo(new LeaseCounts(99, 2, 2, 0, 0));
    }

    @Test
    void theAsynchronousPathTakesAndServesLeasesToo() throws Exception {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientRedisBackend instance = instance();
        List<LimitRequest> one = List.of(new LimitRequest(limit, "k", 1));
        assertThat(instance.tryAcquireAllAsync(one, Runnable::run).toCompletableFuture().get().allowed()).isTrue();
        this.clock.advanceMillis(10);
        long calls = redis.server().scriptCalls();
        for (int i = 1; i <= 100; i++) {
            Decisions decisions = instance.tryAcquireAllAsync(one, Runnable::run).toCompletableFuture().get();
            assertThat(decisions.allowed()).isTrue();
            assertThat(decisions.get(0).remaining()).isEqualTo(999 - i);
        }
        assertThat(redis.server().scriptCalls() - calls).as("a lease and a top-up for 100 decisions").isEqualTo(2);
        assertThat(instance.status().leaseCounts("api").fromLease()).isEqualTo(99);
    }

    @Test
    void whatALeaseDidNotAdmitIsGivenBackToItsSubWindowWhenItEnds() {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientRedisBackend instance = instance();
        lease(instance, limit, "k");
        assertThat(instance.tryAcquire(limit, "k", 1).allowed()).isTrue();
        long admitted = 3;
        assertThat(instance.usage(limit, "k").used()).as("counted at once").isGreaterThan(admitted);
        this.clock.advanceMillis(1_000);
        instance.sweepLeases();
        assertThat(instance.status().leaseState("api", "k").held()).isFalse();
        assertThat(instance.usage(limit, "k").used()).isEqualTo(admitted);
        // Given back to the sub-window it came from: it leaves the window with it, not later.
        this.clock.advanceMillis(9_000);
        assertThat(instance.usage(limit, "k").used()).isZero();
    }

    @Test
    void aLeaseEndsBeforeItsSubWindowAndAfterASecondAtMost() {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientRedisBackend instance = instance();
        lease(instance, limit, "k");
        long endsIn = instance.status().leaseState("api", "k").endsInMillis();
        assertThat(endsIn).isEqualTo(1_000 - 10 - Leases.MARGIN_MILLIS);
        this.clock.advanceMillis(endsIn);
        long calls = redis.server().scriptCalls();
        assertThat(instance.tryAcquire(limit, "k", 1).allowed()).isTrue();
        assertThat(redis.server().scriptCalls() - calls).as("decided in Redis, after a give-back").isEqualTo(2);

        LimitDefinition longSlots = LimitDefinition.of("daily", 100_000, Duration.ofMinutes(100), 10);
        lease(instance, longSlots, "k");
        assertThat(instance.status().leaseState("daily", "k").endsInMillis()).isEqualTo(Leases.MAX_LEASE_MILLIS);
    }

    @Test
    void aKeyWithLimitTenCalledTwentyTimesAcrossTwoInstancesAdmitsExactlyTen() {
        LimitDefinition limit = LimitDefinition.of("api", 10, Duration.ofSeconds(10), 10);
        ResilientRedisBackend first = instance();
        ResilientRedisBackend second = instance();
        int admitted = 0;
        for (int i = 0; i < 20; i++) {
            this.clock.advanceMillis(1);
            ResilientRedisBackend instance = (i % 3 == 0) ? second : first;
            admitted += instance.tryAcquire(limit, "k", 1).allowed() ? 1 : 0;
        }
        assertThat(admitted).isEqualTo(10);
        // Nothing is held back at the end: the last permits went one by one.
        assertThat(first.status().leaseState("api", "k").left() + second.status().leaseState("api", "k").left()).isZero();
    }

    @Test
    void redisGivesAtMostHalfOfWhatIsLeftAfterTheCall() {
        LimitDefinition limit = LimitDefinition.of("api", 101, Duration.ofSeconds(10), 10);
        RedisBackend redis = redisAtTime();
        LeaseGrant lease = lease(redis, limit, "k", 1, 1_000);
        assertThat(lease.taken()).isEqualTo(1 + 50);
        assertThat(lease.decision().remaining()).isEqualTo(50);
        assertThat(lease(redis, limit, "k", 1, 1_000).taken()).isEqualTo(1 + 24);
        assertThat(lease(redis, limit, "k", 2, 2).taken()).as("only what is wanted").isEqualTo(2);
        LeaseGrant last = null;
        for (int i = 0; i < 30; i++) {
            last = lease(redis, limit, "k", 1, 1_000);
        }
        assertThat(last.decision().allowed()).isFalse();
        assertThat(last.taken()).isZero();
        assertThat(redis.peek(limit, "k").remaining()).isZero();
    }

    @Test
    void aChangedLimitOrPlanEndsTheLeaseAndGivesBackItsRest() {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        ResilientRedisBackend instance = instance();
        lease(instance, limit, "k");
        LimitDefinition lower = limit.withLimit(3);
        Decision decision = instance.tryAcquire(lower, "k", 1);
        assertThat(decision.allowed()).as("3 used of 3").isTrue();
        assertThat(decision.remaining()).isZero();
        assertThat(instance.usage(lower, "k").used()).isEqualTo(3);
        assertThat(instance.tryAcquire(lower, "k", 1).allowed()).isFalse();
    }

    @Test
    void aResetEndsTheLeaseHereAtOnceAndOnOtherInstancesWithinASecond() {
        LimitDefinition limit = LimitDefinition.of("daily", 100_000, Duration.ofMinutes(100), 10);
        ResilientRedisBackend here = instance();
        ResilientRedisBackend other = instance();
        lease(here, limit, "k");
        lease(other, limit, "k");
        here.reset(limit, "k");
        assertThat(here.status().leaseState("daily", "k").held()).isFalse();
        assertThat(other.status().leaseState("daily", "k").held()).isTrue();
        this.clock.advanceMillis(Leases.MAX_LEASE_MILLIS);
        assertThat(other.status().leaseState("daily", "k").held()).isFalse();
        other.sweepLeases();
        // The old lease's rest is not given back into the new counter.
        assertThat(here.tryAcquire(limit, "k", 1).allowed()).isTrue();
        assertThat(here.usage(limit, "k").used()).isEqualTo(1);
    }

    @Test
    void aLeaseServesWhileRedisIsDownThenThePolicyDecidesAndItsRestIsLost() {
        onARedisOfItsOwn(FailurePolicy.FAIL_CLOSED, (own, instance) -> {
            LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
            lease(instance, limit, "k");
            long left = instance.status().leaseState("api", "k").left();
            own.stop();
            for (long i = 0; i < left; i++) {
                assertThat(instance.tryAcquire(limit, "k", 1).allowed()).as("from the lease").isTrue();
            }
            assertThat(instance.tryAcquire(limit, "k", 1).allowed()).as("fail-closed").isFalse();
            assertThat(instance.status().leaseCounts("api").fromLease()).isEqualTo(left);

            lease(instance, limit, "other");
            assertThat(instance.status().leaseState("api", "other").held()).as("no new lease without Redis").isFalse();
        });
    }

    @Test
    void whenRedisFailsToTakeBackAnEndedLeaseItsRestIsCountedAsLost() {
        onARedisOfItsOwn(FailurePolicy.FAIL_OPEN, (own, instance) -> {
            LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
            lease(instance, limit, "k");
            long left = instance.status().leaseState("api", "k").left();
            own.stop();
            this.clock.advanceMillis(1_000);
            instance.sweepLeases();
            assertThat(instance.status().leaseCounts("api").lost()).isEqualTo(left);
            assertThat(instance.status().leaseCounts("api").givenBack()).isZero();
        });
    }

    @Test
    void aTopUpThatLandsWhileTheInstanceClosesIsGivenBackToo() throws InterruptedException {
        LimitDefinition limit = LimitDefinition.of("api", 1000, Duration.ofSeconds(10), 10);
        List<Runnable> held = new CopyOnWriteArrayList<>();
        RedisBackend heldTopUps = RedisBackend.atTime(holdingTopUps(lettuce, held),
                new RedisKeys("limiter"), this.clock::currentTimeMillis);
        ResilientRedisBackend instance = instance(heldTopUps, FailurePolicy.FAIL_OPEN);
        lease(instance, limit, "closing");
        long admitted = 2;
        while (held.isEmpty()) {
            assertThat(admitted).as("calls before a top-up").isLessThan(101);
            assertThat(instance.tryAcquire(limit, "closing", 1).allowed()).isTrue();
            admitted++;
        }
        // The server is slow to answer the top-up (a busy host): the instance closes meanwhile.
        Thread closing = new Thread(instance::close, "closing");
        closing.start();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                .until(() -> closing.getState() == Thread.State.TIMED_WAITING
                        || closing.getState() == Thread.State.TERMINATED);
        held.get(0).run();
        closing.join();
        assertThat(redisAtTime().usage(limit, "closing").used()).as("counted in Redis once the instance closed")
                .isEqualTo(admitted);
        assertThat(instance.status().leaseCounts("api").lost()).isZero();
    }

    /** The real runner, its top-ups held until the test runs them. */
    private static RedisScriptRunner holdingTopUps(LettuceScriptRunner runner, List<Runnable> held) {
        return new Synchronous(runner) {

            @Override
            public CompletableFuture<List<Long>> runAsync(byte[][] keys, byte[][] args, Executor blocking) {
                CompletableFuture<List<Long>> reply = new CompletableFuture<>();
                held.add(() -> super.runAsync(keys, args, blocking).whenComplete((answer, failure) -> {
                    if (failure != null) {
                        reply.completeExceptionally(failure);
                    }
                    else {
                        reply.complete(answer);
                    }
                }));
                return reply;
            }

        };
    }

    /**
     * An instance on a redis-server of the test's own, which the test may stop. Its calls wait no
     * longer than the timeout (max-wait = timeout), as in {@code ResilientRedisBackendTests}: with the
     * default max-wait, each top-up the lease tried while Redis was down waited up to 2 s on a busy
     * machine (the test took 54 s), and what these tests prove is what happens once Redis is down.
     */
    private void onARedisOfItsOwn(FailurePolicy policy, BiConsumer<RedisServer, ResilientRedisBackend> test) {
        RedisServer own = RedisServer.start();
        LettuceConnectionFactory factory = RedisExtension.connectionFactory(own.port());
        try {
            LettuceScriptRunner runner = new LettuceScriptRunner(factory, Duration.ofMillis(200), Duration.ofMillis(200));
            RedisBackend redis = RedisBackend.atTime(new Synchronous(runner), new RedisKeys("limiter"),
                    this.clock::currentTimeMillis);
            test.accept(own, instance(redis, policy));
        }
        finally {
            factory.destroy();
            own.close();
        }
    }

    @Test
    void theSlidingLogDoesNotLease() {
        LimitDefinition log = new LimitDefinition("log", 1000, Duration.ofSeconds(10), 10,
                io.slidinglimiter.core.Algorithm.SLIDING_LOG);
        ResilientRedisBackend instance = instance();
        assertThat(instance.status().leases(log)).isFalse();
        for (int i = 0; i < 10; i++) {
            this.clock.advanceMillis(1);
            instance.tryAcquire(log, "k", 1);
        }
        assertThat(instance.status().leaseState("log", "k").held()).isFalse();
        assertThat(instance.usage(log, "k").used()).isEqualTo(10);
    }

    /**
     * One instance, calls of one permit at random times: leases change nothing in what is decided.
     * Each decision equals the brute-force model's, and so does the count Redis keeps once the
     * leases are given back.
     */
    @Test
    void oneInstanceDecidesLikeTheModel() {
        WindowCounterPropertiesTests.forEachSeed(SEEDS, (seed) -> {
            redis.flush();
            SplittableRandom random = new SplittableRandom(seed);
            LimitDefinition limit = randomLimit(random, 60);
            long slotMillis = limit.windowMillis() / limit.subWindows();
            ResilientRedisBackend instance = instance();
            SlotModel model = new SlotModel(slotMillis, limit.subWindows());
            for (int i = 0; i < 300; i++) {
                this.clock.advanceMillis(random.nextInt(0, 4) * TIME_UNIT_MILLIS);
                long now = this.clock.currentTimeMillis();
                boolean expected = model.decide(now, 1, limit.limit()).allowed();
                assertThat(instance.tryAcquire(limit, "k", 1).allowed()).as("seed %d, call %d", seed, i)
                        .isEqualTo(expected);
            }
            this.clock.advanceMillis(slotMillis);
            instance.sweepLeases();
            assertThat(instance.usage(limit, "k").used()).as("seed %d: Redis's count after the give-backs", seed)
                    .isEqualTo(model.used(this.clock.currentTimeMillis()));
        });
    }

    /**
     * Several instances with uneven load and costs: no window holds more than the limit, and Redis
     * never counts fewer permits than were admitted.
     */
    @Test
    void severalInstancesNeverAdmitMoreThanTheLimitInAnyWindow() {
        WindowCounterPropertiesTests.forEachSeed(SEEDS, (seed) -> {
            redis.flush();
            SplittableRandom random = new SplittableRandom(seed);
            LimitDefinition limit = randomLimit(random, 200);
            List<ResilientRedisBackend> instances = new ArrayList<>();
            int count = random.nextInt(2, 5);
            double[] weights = new double[count];
            for (int i = 0; i < count; i++) {
                instances.add(instance());
                weights[i] = random.nextDouble(0.1, 10);
            }
            SlotModel admitted = new SlotModel(limit.windowMillis() / limit.subWindows(), limit.subWindows());
            for (int i = 0; i < 600; i++) {
                this.clock.advanceMillis(random.nextInt(0, 3) * TIME_UNIT_MILLIS);
                long now = this.clock.currentTimeMillis();
                long cost = (random.nextInt(4) == 0) ? random.nextInt(1, 4) : 1;
                ResilientRedisBackend instance = instances.get(pick(random, weights));
                if (instance.tryAcquire(limit, "k", cost).allowed()) {
                    admitted.add(now, cost);
                    assertThat(admitted.used(now)).as("seed %d, call %d: admitted in the window", seed, i)
                            .isLessThanOrEqualTo(limit.limit());
                    assertThat(instance.usage(limit, "k").used()).as("seed %d, call %d: Redis's count", seed, i)
                            .isGreaterThanOrEqualTo(admitted.used(now));
                }
            }
        });
    }

    /**
     * The sizing rule, simulated: N instances, uneven and changing load, callers that together want
     * more than the limit. Each window admits at least this share of the limit; README, "Leases".
     */
    @Test
    void unevenLoadStillAdmitsMostOfTheLimitInEveryWindow() {
        for (int count : new int[] { 2, 4, 8 }) {
            for (long seed = 0; seed < 5; seed++) {
                redis.flush();
                SplittableRandom random = new SplittableRandom(seed);
                LimitDefinition limit = LimitDefinition.of("api", 3_000, Duration.ofSeconds(2), 10);
                List<ResilientRedisBackend> instances = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    instances.add(instance());
                }
                long base = (this.clock.currentTimeMillis() / 2_000 + 1) * 2_000;
                this.clock.advanceMillis(base - this.clock.currentTimeMillis());
                long windows = 6;
                long[] admittedPerWindow = new long[(int) windows];
                long roundTrips = redis.server().scriptCalls();
                long decisions = 0;
                for (long window = 0; window < windows; window++) {
                    // One instance at a time is hot (nine calls in ten), and it changes every 10 to 100 ms, so
                    // that the one that was hot stops with a lease in hand; the callers want twice the limit
                    // and more.
                    int hot = random.nextInt(count);
                    long calls = random.nextLong(6_000, 7_500);
                    for (long call = 0; call < calls; call++) {
                        this.clock.advanceMillis((call % 4 == 0) ? 1 : 0);
                        if (random.nextInt(200) == 0) {
                            hot = random.nextInt(count);
                        }
                        int index = (random.nextInt(10) == 0) ? random.nextInt(count) : hot;
                        decisions++;
                        if (instances.get(index).tryAcquire(limit, "k", 1).allowed()) {
                            admittedPerWindow[(int) window]++;
                        }
                        if (call % 200 == 0) {
                            instances.forEach(ResilientRedisBackend::sweepLeases);
                        }
                    }
                    long endOfWindow = base + (window + 1) * 2_000;
                    this.clock.advanceMillis(endOfWindow - this.clock.currentTimeMillis());
                    instances.forEach(ResilientRedisBackend::sweepLeases);
                }
                for (long window = 0; window < windows; window++) {
                    assertThat(admittedPerWindow[(int) window])
                            .as("%d instances, seed %d, window %d", count, seed, window)
                            .isBetween(2_700L, 3_000L);
                }
                assertThat(redis.server().scriptCalls() - roundTrips).as("%d instances, seed %d: round trips", count, seed)
                        .isLessThan(decisions / 10);
            }
        }
    }

    /** 1 to 7 sub-windows of 20 to 100 ms, a limit below {@code bound}. */
    /**
     * The unit of the random schedules' sub-windows and steps. The schedules run on the manual clock,
     * but Redis expires a counter's key on its own clock, the window's length after its last write: in
     * units of 100 ms, a window lasts 2 s at least, which no step outlasts on a busy host, so Redis
     * never drops a key the clock still counts; a lease (1 s at most) still serves several calls.
     */
    private static final long TIME_UNIT_MILLIS = 100;

    private static LimitDefinition randomLimit(SplittableRandom random, int bound) {
        int slots = random.nextInt(1, 8);
        long slotMillis = random.nextInt(1, 6) * 20L * TIME_UNIT_MILLIS;
        return LimitDefinition.of("api", random.nextInt(1, bound), Duration.ofMillis(slots * slotMillis), slots);
    }

    private static int pick(SplittableRandom random, double[] weights) {
        double total = 0;
        for (double weight : weights) {
            total += weight;
        }
        double draw = random.nextDouble(total);
        for (int i = 0; i < weights.length; i++) {
            draw -= weights[i];
            if (draw < 0) {
                return i;
            }
        }
        return weights.length - 1;
    }

    /** Two calls 10 ms apart: the second takes a lease. */
    private void lease(ResilientRedisBackend instance, LimitDefinition limit, String key) {
        instance.tryAcquire(limit, key, 1);
        this.clock.advanceMillis(10);
        instance.tryAcquire(limit, key, 1);
    }

    private RedisBackend redisAtTime() {
        return RedisBackend.atTime(new Synchronous(lettuce), new RedisKeys("limiter"), this.clock::currentTimeMillis);
    }

    private ResilientRedisBackend instance() {
        return instance(redisAtTime(), FailurePolicy.FAIL_OPEN);
    }

    private ResilientRedisBackend instance(RedisBackend redis, FailurePolicy policy) {
        return new ResilientRedisBackend(redis, new LocalBackend(this.clock, 1_000),
                new ResilientRedisBackend.Settings(policy, Map.of(), 3, 500, 1_000, (name) -> true), this.clock,
                (limit) -> {
                }, null, false);
    }

    /** Takes a lease on this thread. */
    private static LeaseGrant lease(RedisBackend redis, LimitDefinition limit, String key, long cost, long wanted) {
        return redis.lease(limit, key, cost, wanted, null).toCompletableFuture().join();
    }

    /** The real runner, with its background calls (give-backs) run before the call returns. */
    private static class Synchronous implements RedisScriptRunner {

        private final LettuceScriptRunner runner;

        Synchronous(LettuceScriptRunner runner) {
            this.runner = runner;
        }

        @Override
        public List<Long> run(byte[][] keys, byte[][] args) {
            return this.runner.run(keys, args);
        }

        @Override
        public CompletionStage<List<Long>> runLater(byte[][] keys, byte[][] args) {
            try {
                return CompletableFuture.completedFuture(this.runner.run(keys, args));
            }
            catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }

        @Override
        public CompletableFuture<List<Long>> runAsync(byte[][] keys, byte[][] args, Executor blocking) {
            return runLater(keys, args).toCompletableFuture();
        }

    }

}
