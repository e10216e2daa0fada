package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisCommandExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.ManualTimeSource;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.local.LocalBackend;
import io.slidinglimiter.testsupport.ConcurrentCalls;
import io.slidinglimiter.testsupport.RedisExtension;

import static io.slidinglimiter.redis.ScriptMessages.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Decisions that wait for a call in flight go to Redis together, as one script call, and each is
 * decided exactly as if it had come alone: against the local backend over seeded schedules whose
 * operations run at once on many threads, counted in Redis under load, and one at a time when
 * nothing else waits.
 */
class BatchedDecisionsTests {

    @RegisterExtension
    static final RedisExtension redis = RedisExtension.perTest();

    private static final ExecutorService callers = Executors.newFixedThreadPool(8);

    @AfterAll
    static void stopCallers() {
        callers.shutdownNow();
    }

    /**
     * Seeded schedules: each step runs up to eight operations at once on eight threads (acquisitions
     * of one limit or two all-or-nothing, refunds and settles of what was admitted, resets), each on
     * a key of its own in that step, so that the local backend, running them one by one, is the
     * model whatever order they reach Redis in. Every decision and every count afterwards equals the
     * local backend's, and the schedules were decided in batches.
     */
    @Test
    void batchesDecideLikeTheLocalBackend() throws Exception {
        LettuceScriptRunner runner = connectedRunner();
        long[] batchesBefore = runner.batches().counts();
        long scriptCallsBefore = redis.server().scriptCalls();
        long operations = 0;
        for (long seed = 0; seed < 20; seed++) {
            operations += replay(runner, seed, 40);
        }
        long[] batches = runner.batches().counts();
        assertThat(batches[0] - batchesBefore[0]).as("batches sent").isPositive();
        assertThat(runner.batches().decisionsIn(redis.server().scriptCalls() - scriptCallsBefore, batchesBefore))
                .as("decisions Redis made: each script call, a batch counting as its decisions")
                .isEqualTo(operations);
    }

    /**
     * The load test: 1, 16 and 64 callers on random keys of a limit no key reaches. Counted,
     * not timed: every decision was made in Redis (the permits Redis counted equal the decisions
     * asked), one caller alone sends one script call per decision, and many callers fewer script
     * calls than decisions, the script calls Redis ran and the batches' sizes adding up to the
     * decisions.
     */
    @Test
    void underLoadEveryDecisionIsMadeInRedisInFewerScriptCalls() throws Exception {
        LimitDefinition limit = LimitDefinition.of("never-reached", 1_000_000_000L, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = connectedRunner();
        RedisBackend backend = new RedisBackend(runner, new RedisKeys("limiter"), null);
        for (int callers : new int[] { 1, 16, 64 }) {
            long countedBefore = redis.server().countedPermits("limiter:*:never-reached");
            long scriptCallsBefore = redis.server().scriptCalls();
            long[] batchesBefore = runner.batches().counts();
            int each = 3_200 / callers;
            ConcurrentCalls load = ConcurrentCalls.run(callers, each,
                    (thread, i) -> backend.tryAcquire(limit, "user-" + (thread * 1_000_003L + i * 7919L) % 100_000, 1).allowed());
            long decisions = (long) callers * each;
            long scriptCalls = redis.server().scriptCalls() - scriptCallsBefore;
            assertThat(load.failures()).hasValue(0);
            assertThat(load.admitted()).hasValue((int) decisions);
            assertThat(redis.server().countedPermits("limiter:*:never-reached") - countedBefore)
                    .as("%d callers: decisions counted in Redis", callers).isEqualTo(decisions);
            assertThat(runner.batches().decisionsIn(scriptCalls, batchesBefore)).as("%d callers: script calls and batches' sizes",
                    callers).isEqualTo(decisions);
            if (callers == 1) {
                assertThat(scriptCalls).as("one caller: one script call a decision").isEqualTo(decisions);
            }
            else {
                assertThat(scriptCalls).as("%d callers: script calls for %d decisions", callers, decisions)
                        .isLessThan(decisions);
            }
        }
        runner.close();
    }

    /** With batching off, every decision is a script call of its own, however many wait. */
    @Test
    void withBatchingOffEveryDecisionIsAScriptCall() throws Exception {
        LimitDefinition limit = LimitDefinition.of("unbatched", 1_000_000_000L, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5));
        runner.setBatching(false);
        runner.connect().get();
        RedisBackend backend = new RedisBackend(runner, new RedisKeys("limiter"), null);
        long before = redis.server().scriptCalls();
        ConcurrentCalls load = ConcurrentCalls.run(16, 100, (thread, i) -> backend.tryAcquire(limit, "k" + i, 1).allowed());
        assertThat(load.admitted()).hasValue(1_600);
        assertThat(redis.server().scriptCalls() - before).isEqualTo(1_600);
        assertThat(runner.batches().counts()).containsExactly(0, 0);
        runner.close();
    }

    /**
     * Two instances (two runners, each batching on its connection), sixteen threads each on one key:
     * exactly the limit is admitted, and the keys of many callers are each counted exactly.
     */
    @Test
    void twoBatchingInstancesAdmitExactlyTheLimit() throws Exception {
        LimitDefinition limit = LimitDefinition.of("shared", 1_000, Duration.ofMinutes(1), 10);
        LettuceScriptRunner first = new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5));
        LettuceScriptRunner second = new LettuceScriptRunner(RedisExtension.connectionFactory(redis.server().port()),
                Duration.ofSeconds(5));
        CompletableFuture.allOf(first.connect(), second.connect()).get();
        List<RedisBackend> instances = List.of(new RedisBackend(first, new RedisKeys("limiter"), null),
                new RedisBackend(second, new RedisKeys("limiter"), null));
        ConcurrentCalls load = ConcurrentCalls.run(32, 100,
                (thread, i) -> instances.get(thread % 2).tryAcquire(limit, "one-key", 1).allowed());
        assertThat(load.failures()).hasValue(0);
        assertThat(load.admitted()).hasValue(1_000);
        assertThat(first.batches().counts()[0] + second.batches().counts()[0]).as("batches sent").isPositive();
        first.close();
        second.close();
    }

    /**
     * Decisions queued behind two calls held by a paused server go in batches, in order: a reset
     * among them goes alone, between the decisions before and after it; a decision the script cannot decide fails
     * alone, with Redis's error, and the others stand.
     */
    @Test
    void aBatchKeepsItsOrderAndADecisionThatFailsFailsAlone() throws Exception {
        LimitDefinition limit = LimitDefinition.of("ordered", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = connectedRunner();
        RedisKeys keys = new RedisKeys("limiter");
        byte[][] key = { keys.counterKey("ordered", "k") };
        byte[][] acquire = ScriptMessages.acquire(ScriptMessages.REDIS_TIME, ScriptMessages.REDIS_TIME,
                List.of(new LimitRequest(limit, "k", 2)));
        byte[][] reset = ScriptMessages.arguments(ScriptMessages.RESET, ScriptMessages.REDIS_TIME,
                ScriptMessages.REDIS_TIME, List.of(limit), new long[] { 1 });
        byte[][] malformed = withUnreadableWindow(acquire);
        long[] batchesBefore = runner.batches().counts();
        List<CompletableFuture<List<Long>>> replies = sentWhilePaused(runner,
                List.of(key, key, key, key, key, key, key),
                List.of(acquire, acquire, malformed, acquire, reset, acquire, acquire));
        assertThat(remaining(replies.get(0))).isEqualTo(3);
        assertThat(remaining(replies.get(1))).isEqualTo(1);
        assertFailedInTheScript(replies.get(2));
        assertThat(replies.get(3).get().get(0)).as("2 more than the 1 left").isZero();
        assertThat(remaining(replies.get(5))).as("after the reset").isEqualTo(3);
        assertThat(remaining(replies.get(6))).isEqualTo(1);
        long[] batches = runner.batches().counts();
        assertThat(batches[0] - batchesBefore[0]).as("batches: before the reset, after it").isEqualTo(2);
        assertThat(batches[1] - batchesBefore[1]).as("decisions batched (two went alone at once)").isEqualTo(4);
        runner.close();
    }

    /**
     * The decisions of a batch read Redis's clock once, yet each has a generation of its own, later
     * than the one before it, and a counter one of them makes is stamped with it: a refund of an
     * earlier decision never reaches a counter made after it.
     */
    @Test
    void eachDecisionOfABatchHasAGenerationOfItsOwn() throws Exception {
        LimitDefinition limit = LimitDefinition.of("generations", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = connectedRunner();
        RedisKeys keys = new RedisKeys("limiter");
        List<byte[][]> counters = new ArrayList<>();
        List<byte[][]> acquires = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            counters.add(new byte[][] { keys.counterKey("generations", "k" + i) });
            acquires.add(ScriptMessages.acquire(ScriptMessages.REDIS_TIME, ScriptMessages.REDIS_TIME,
                    List.of(new LimitRequest(limit, "k" + i, 1))));
        }
        long[] batchesBefore = runner.batches().counts();
        List<CompletableFuture<List<Long>>> replies = sentWhilePaused(runner, counters, acquires);
        assertThat(runner.batches().counts()[1] - batchesBefore[1]).as("two went alone, four in a batch").isEqualTo(4);
        List<Long> generations = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            long generation = replies.get(i).get().get(6);
            generations.add(generation);
            String counter = "limiter:{k" + i + "}:generations";
            String stamped = redis.server().call((commands) -> commands.hget(counter, "c"));
            assertThat(stamped).as("the counter decision " + i + " made").isEqualTo(Long.toString(generation));
        }
        assertThat(generations).doesNotHaveDuplicates();
        assertThat(generations.subList(2, 6)).as("in the batch, in its order").isSorted();
        runner.close();
    }

    /**
     * Callers of one limit differ only in their deadline (ARGV[3]), so a batch sends each later
     * decision's deadline alone (batch.lua): each is still decided by its own, one Redis ran too late
     * changing nothing.
     */
    @Test
    void eachDecisionOfABatchKeepsItsOwnDeadline() throws Exception {
        LimitDefinition limit = LimitDefinition.of("deadlines", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = connectedRunner();
        byte[][] key = { new RedisKeys("limiter").counterKey("deadlines", "k") };
        long redisMillis = Long.parseLong(redis.server().<List<String>>call((commands) -> commands.time()).get(0)) * 1000;
        List<LimitRequest> request = List.of(new LimitRequest(limit, "k", 1));
        byte[][] inTime = ScriptMessages.acquire(ScriptMessages.REDIS_TIME, ScriptMessages.bytes(redisMillis + 60_000),
                request);
        byte[][] late = ScriptMessages.acquire(ScriptMessages.REDIS_TIME, ScriptMessages.bytes(redisMillis - 60_000),
                request);
        long[] batchesBefore = runner.batches().counts();
        List<CompletableFuture<List<Long>>> replies = sentWhilePaused(runner, List.of(key, key, key, key, key, key),
                List.of(inTime, inTime, inTime, late, inTime, late));
        long[] batches = runner.batches().counts();
        assertThat(batches[1] - batchesBefore[1]).as("two went alone, four in a batch").isEqualTo(4);
        assertThat(remaining(replies.get(2))).isEqualTo(2);
        assertThat(replies.get(3).get().get(0)).as("run after its deadline").isEqualTo(-1);
        assertThat(remaining(replies.get(4))).as("the late one counted nothing").isEqualTo(1);
        assertThat(replies.get(5).get().get(0)).as("run after its deadline").isEqualTo(-1);
        runner.close();
    }

    /**
     * A batch reads a limit's numbers once while decisions of that limit follow one another, and
     * again at each decision of another limit. Two limits whose sub-windows are equally long, so that
     * one time falls in the same sub-window number of both, but which count ten and five of them,
     * interleaved in one batch at a fixed time: each decision counts with its own limit, in its own
     * ring's field (sub-window 283 333 337 is field 7 of ten, field 2 of five).
     */
    @Test
    void aBatchOfTwoLimitsCountsEachWithItsOwnNumbers() throws Exception {
        LimitDefinition ten = LimitDefinition.of("ten", 9, Duration.ofMinutes(1), 10);
        LimitDefinition five = LimitDefinition.of("five", 4, Duration.ofSeconds(30), 5);
        LettuceScriptRunner runner = connectedRunner();
        RedisKeys keys = new RedisKeys("limiter");
        byte[] time = bytes(6_000L * 283_333_337);
        byte[][] tenKey = { keys.counterKey("ten", "k") };
        byte[][] fiveKey = { keys.counterKey("five", "k") };
        byte[][] tenCall = ScriptMessages.acquire(time, ScriptMessages.REDIS_TIME, List.of(new LimitRequest(ten, "k", 1)));
        byte[][] fiveCall = ScriptMessages.acquire(time, ScriptMessages.REDIS_TIME, List.of(new LimitRequest(five, "k", 1)));
        long[] batchesBefore = runner.batches().counts();
        List<CompletableFuture<List<Long>>> replies = sentWhilePaused(runner,
                List.of(tenKey, fiveKey, tenKey, fiveKey, tenKey, tenKey, fiveKey, fiveKey, tenKey),
                List.of(tenCall, fiveCall, tenCall, fiveCall, tenCall, tenCall, fiveCall, fiveCall, tenCall));
        assertThat(runner.batches().counts()[1] - batchesBefore[1]).as("two went alone, seven in a batch").isEqualTo(7);
        List<Long> remaining = new ArrayList<>();
        for (CompletableFuture<List<Long>> reply : replies) {
            remaining.add(remaining(reply));
        }
        assertThat(remaining).as("ten's 9 permits and five's 4, each counted down alone")
                .containsExactly(8L, 3L, 7L, 2L, 6L, 5L, 1L, 0L, 4L);
        assertThat(redis.server().<Map<String, String>>call((commands) -> commands.hgetall("limiter:{k}:ten")))
                .containsEntry("t", "5").containsEntry("7", "5").doesNotContainKey("2");
        assertThat(redis.server().<Map<String, String>>call((commands) -> commands.hgetall("limiter:{k}:five")))
                .containsEntry("t", "4").containsEntry("2", "4").doesNotContainKey("7");
        runner.close();
    }

    /**
     * Arguments that the script cannot read (a window that is not a number), shared by two decisions
     * of a batch after a good one, fail both alike, each with the error it would get alone: the
     * script notes a limit's arguments as read only once it has read them.
     */
    @Test
    void decisionsSharingArgumentsThatFailEachFailAlike() throws Exception {
        LimitDefinition limit = LimitDefinition.of("unreadable", 5, Duration.ofMinutes(1), 10);
        LettuceScriptRunner runner = connectedRunner();
        byte[][] key = { new RedisKeys("limiter").counterKey("unreadable", "k") };
        byte[][] acquire = ScriptMessages.acquire(ScriptMessages.REDIS_TIME, ScriptMessages.REDIS_TIME,
                List.of(new LimitRequest(limit, "k", 1)));
        byte[][] malformed = withUnreadableWindow(acquire);
        long[] batchesBefore = runner.batches().counts();
        List<CompletableFuture<List<Long>>> replies = sentWhilePaused(runner, List.of(key, key, key, key, key),
                List.of(acquire, acquire, acquire, malformed, malformed));
        assertThat(runner.batches().counts()[1] - batchesBefore[1]).as("two went alone, three in a batch").isEqualTo(3);
        assertThat(remaining(replies.get(2))).isEqualTo(2);
        for (int i = 3; i < 5; i++) {
            assertFailedInTheScript(replies.get(i));
        }
        assertThat(redis.server().<String>call((commands) -> commands.hget("limiter:{k}:unreadable", "t")))
                .as("the failed decisions counted nothing").isEqualTo("3");
        runner.close();
    }

    private static LettuceScriptRunner connectedRunner() throws Exception {
        LettuceScriptRunner runner = new LettuceScriptRunner(redis.connectionFactory(), Duration.ofSeconds(5));
        runner.connect().get();
        return runner;
    }

    /**
     * Sends each call, in order, while the server is paused for 300 ms: the first two go at once and
     * the others wait for them, then go in batches.
     * @return each call's reply, once all came (a failed one included)
     */
    private static List<CompletableFuture<List<Long>>> sentWhilePaused(LettuceScriptRunner runner, List<byte[][]> keys,
            List<byte[][]> args) throws Exception {
        redis.server().call((commands) -> commands.clientPause(300));
        List<CompletableFuture<List<Long>>> replies = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            replies.add(runner.runAsync(keys.get(i), args.get(i), Runnable::run));
        }
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).exceptionally((ignored) -> null)
                .get(10, TimeUnit.SECONDS);
        return replies;
    }

    /** An acquisition's arguments with a window the script cannot read as a number. */
    private static byte[][] withUnreadableWindow(byte[][] acquire) {
        byte[][] malformed = acquire.clone();
        malformed[4] = bytes("not a window");
        return malformed;
    }

    /** Asserts that a decision failed alone, with the script's error for a window that is not a number. */
    private static void assertFailedInTheScript(CompletableFuture<List<Long>> reply) {
        assertThatExceptionOfType(java.util.concurrent.ExecutionException.class).isThrownBy(reply::get)
                .withCauseInstanceOf(RedisBackendException.class)
                .withRootCauseInstanceOf(RedisCommandExecutionException.class)
                .withMessageContaining("arithmetic");
    }

    private static long remaining(CompletableFuture<List<Long>> reply) throws Exception {
        List<Long> values = reply.get();
        assertThat(values.get(0)).as("admitted").isEqualTo(1);
        return values.get(3);
    }

    /**
     * The unit of a replayed schedule's windows and steps. The schedule runs on a fake clock, but
     * Redis expires a counter's key on its own clock, the window's length after its last write: in
     * units of ten seconds, no step of a busy host outlasts a window, so Redis never drops a key the
     * fake clock still counts (in milliseconds, a slow step found "expected remaining 0, was 7").
     */
    private static final long TIME_UNIT_MILLIS = 10_000;

    /** @return the script calls the schedule asked for, peeks included */
    private static long replay(LettuceScriptRunner runner, long seed, int steps) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        ManualTimeSource time = new ManualTimeSource(1_700_000_000_000L + random.nextLong(0, 1_000_000));
        LocalBackend local = new LocalBackend(time, 1_000);
        RedisBackend backend = RedisBackend.atTime(runner, new RedisKeys("limiter"), time::currentTimeMillis);
        int slots = random.nextInt(1, 11);
        LimitDefinition counter = LimitDefinition.of("counter-" + seed, random.nextLong(1, 20),
                Duration.ofMillis(slots * random.nextLong(1, 40) * TIME_UNIT_MILLIS), slots);
        LimitDefinition log = new LimitDefinition("log-" + seed, random.nextLong(1, 20),
                Duration.ofMillis(random.nextLong(1, 300) * TIME_UNIT_MILLIS), 1, Algorithm.SLIDING_LOG);
        Map<String, Admitted> lastAdmitted = new HashMap<>();
        long scriptCalls = 0;
        for (int step = 0; step < steps; step++) {
            time.advanceMillis(TIME_UNIT_MILLIS * (random.nextInt(10) < 7 ? random.nextLong(0, 20) : random.nextLong(0, 400)));
            List<Operation> operations = new ArrayList<>();
            List<String> keys = new ArrayList<>(List.of("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"));
            int count = random.nextInt(1, 9);
            for (int i = 0; i < count; i++) {
                String key = keys.remove(random.nextInt(keys.size()));
                Operation operation = Operation.random(random, key, counter, log, lastAdmitted.remove(key));
                operations.add(operation);
                scriptCalls += operation.scriptCalls();
            }
            String described = String.format("seed %d step %d: %s", seed, step, operations);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Object>> results = new ArrayList<>();
            for (Operation operation : operations) {
                results.add(callers.submit(() -> {
                    start.await();
                    return operation.on(backend);
                }));
            }
            start.countDown();
            for (int i = 0; i < operations.size(); i++) {
                Operation operation = operations.get(i);
                Object actual = results.get(i).get(30, TimeUnit.SECONDS);
                Object expected = operation.on(local);
                if (actual instanceof Decisions decided) {
                    assertThat(decided.decisions()).as(described + ", " + operation)
                            .isEqualTo(((Decisions) expected).decisions());
                    if (decided.allowed()) {
                        lastAdmitted.put(operation.key, new Admitted(operation.requests, decided, (Decisions) expected));
                    }
                }
                else {
                    assertThat(actual).as(described + ", " + operation).isEqualTo(expected);
                }
            }
            for (Operation operation : operations) {
                scriptCalls += 2;
                for (LimitDefinition limit : List.of(counter, log)) {
                    assertThat(backend.peekAt(time.currentTimeMillis(), limit, operation.key))
                            .as(described + ", then " + limit.name() + " of " + operation.key)
                            .isEqualTo(local.peek(limit, operation.key));
                }
            }
        }
        return scriptCalls;
    }

    /** An acquisition admitted in Redis and by the model: what a refund or settle gives back. */
    private record Admitted(List<LimitRequest> requests, Decisions inRedis, Decisions inModel) {
    }

    /** One operation of a step, on one key. */
    private static final class Operation {

        final String kind;

        final String key;

        final List<LimitRequest> requests;

        final Admitted admitted;

        final long[] charges;

        private Operation(String kind, String key, List<LimitRequest> requests, Admitted admitted, long[] charges) {
            this.kind = kind;
            this.key = key;
            this.requests = requests;
            this.admitted = admitted;
            this.charges = charges;
        }

        static Operation random(SplittableRandom random, String key, LimitDefinition counter, LimitDefinition log,
                Admitted admitted) {
            int dice = random.nextInt(20);
            if (admitted != null && dice < 4) {
                return new Operation("refund", key, admitted.requests, admitted, null);
            }
            if (admitted != null && dice < 8) {
                long[] charges = new long[admitted.requests.size()];
                for (int i = 0; i < charges.length; i++) {
                    LimitRequest request = admitted.requests.get(i);
                    charges[i] = random.nextBoolean() ? request.cost() : random.nextLong(0, 2 * request.limit().limit() + 1);
                }
                return new Operation("settle", key, admitted.requests, admitted, charges);
            }
            if (dice == 8) {
                return new Operation("reset", key, List.of(new LimitRequest(counter, key, 1), new LimitRequest(log, key, 1)),
                        null, null);
            }
            LimitDefinition first = random.nextBoolean() ? counter : log;
            List<LimitRequest> requests = new ArrayList<>();
            requests.add(new LimitRequest(first, key, random.nextLong(1, first.limit() + 1)));
            if (random.nextInt(3) == 0) {
                LimitDefinition second = (first == counter) ? log : counter;
                requests.add(new LimitRequest(second, key, random.nextLong(1, second.limit() + 1)));
            }
            return new Operation("acquire", key, List.copyOf(requests), null, null);
        }

        /** The script calls it makes: a settle of exactly the cost none, a reset one per limit, others one. */
        long scriptCalls() {
            if (this.kind.equals("settle")) {
                for (int i = 0; i < this.charges.length; i++) {
                    if (this.charges[i] != this.requests.get(i).cost()) {
                        return 1;
                    }
                }
                return 0;
            }
            return this.kind.equals("reset") ? this.requests.size() : 1;
        }

        /** Runs it in Redis: an acquisition's decisions, else "done". */
        Object on(RedisBackend redis) {
            Decisions taken = (this.admitted != null) ? this.admitted.inRedis : null;
            return on(redis, taken);
        }

        /** Runs it on the model. */
        Object on(LocalBackend local) {
            Decisions taken = (this.admitted != null) ? this.admitted.inModel : null;
            return on(local, taken);
        }

        private Object on(RateLimitBackend backend, Decisions taken) {
            switch (this.kind) {
                case "acquire" -> {
                    return backend.tryAcquireAll(this.requests);
                }
                case "refund" -> backend.refund(this.requests, taken);
                case "settle" -> backend.settle(this.requests, taken, this.charges);
                default -> this.requests.forEach((request) -> backend.reset(request.limit(), request.key()));
            }
            return "done";
        }

        @Override
        public String toString() {
            return this.kind + " " + this.requests.stream().map((r) -> r.limit().name() + "/" + r.key() + " x" + r.cost())
                    .toList() + ((this.charges != null) ? " to " + Arrays.toString(this.charges) : "");
        }

    }

}
