package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.core.RateLimitBackend;
import io.slidinglimiter.core.SplitDecision;

/**
 * Counters in Redis, shared by every application instance: each decision is one run of the
 * limiter's Lua script, which reads the time from Redis, so instances with skewed clocks agree.
 * <pre>{@code
 * RedisBackend backend = new RedisBackend(new LettuceScriptRunner(connectionFactory, Duration.ofMillis(100)),
 *         new RedisKeys("limiter"), null);
 * }</pre>
 * <p>
 * The limits of one call are decided by one script run, all or nothing, whenever their keys share a
 * hash slot: always on a standalone or Sentinel-managed server, and on Cluster when
 * {@code slotOf} puts them in one slot. Across slots, the groups are decided in slot order and a
 * later rejection refunds exactly what the earlier groups took: until the refund lands, another
 * caller may see those permits as used (a brief over-count, never an under-count).
 */
public final class RedisBackend implements RateLimitBackend {

    private static final byte[] ACQUIRE = bytes("acquire");

    /** The largest limit Redis counts exactly: its Lua numbers are doubles. */
    public static final long MAX_LIMIT = (1L << 53) - 1;

    /** The most keys one report of fallback admissions counts in one script call. */
    static final int KEYS_PER_REPORT = 100;

    private static final byte[] PEEK = bytes("peek");

    private static final byte[] RESET = bytes("reset");

    private static final byte[] REFUND = bytes("refund");

    private static final byte[] SETTLE = bytes("settle");

    private static final byte[] LEASE = bytes("lease");

    private static final byte[] GIVE_BACK = bytes("give-back");

    private static final byte[] REDIS_TIME = new byte[0];

    private static final byte[] ZERO = bytes("0");

    private static final byte[] ONE = bytes("1");

    private final RedisScriptRunner runner;

    private final RedisKeys keys;

    private final ToIntFunction<byte[]> slotOf;

    /** The time every script is handed, for tests that replay a schedule; null in production: Redis time. */
    private final LongSupplier fixedTime;

    /**
     * Creates the backend.
     * @param runner runs the script
     * @param keys the key scheme
     * @param slotOf the Cluster hash slot of a key, or null when Redis is not a Cluster
     */
    public RedisBackend(RedisScriptRunner runner, RedisKeys keys, ToIntFunction<byte[]> slotOf) {
        this(runner, keys, slotOf, null);
    }

    private RedisBackend(RedisScriptRunner runner, RedisKeys keys, ToIntFunction<byte[]> slotOf,
            LongSupplier fixedTime) {
        this.runner = runner;
        this.keys = keys;
        this.slotOf = slotOf;
        this.fixedTime = fixedTime;
    }

    /**
     * A backend whose scripts decide, refund, settle, lease and peek at the time {@code clock} gives
     * instead of Redis time: for tests that replay a schedule through the whole stack above it.
     * @param runner runs the script
     * @param keys the key scheme
     * @param clock the time of every script call, in epoch milliseconds
     * @return the backend
     */
    static RedisBackend atTime(RedisScriptRunner runner, RedisKeys keys, LongSupplier clock) {
        return new RedisBackend(runner, keys, null, clock);
    }

    /** The time a script is handed: empty (the script reads Redis TIME), or a test's fixed time. */
    private byte[] now() {
        return (this.fixedTime != null) ? bytes(Long.toString(this.fixedTime.getAsLong())) : REDIS_TIME;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        return decide(List.of(new LimitRequest(limit, key, cost))).get(0);
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        List<List<Integer>> groups = groups(requests);
        if (groups.size() == 1) {
            return decide(requests);
        }
        return SplitDecision.decide(requests, groups, new SplitDecision.Groups() {

            @Override
            public Decisions tryAcquireAll(int group, List<LimitRequest> selected) {
                try {
                    return decide(selected);
                }
                catch (RuntimeException ex) {
                    LimitRequest first = selected.get(0);
                    throw new RedisShardException(shardOf(first.limit(), first.key()), ex);
                }
            }

            @Override
            public void refund(int group, List<LimitRequest> selected, Decisions taken) {
                RedisBackend.this.refund(selected, taken);
            }

        });
    }

    /**
     * {@inheritDoc}
     * <p>
     * A call decided across Cluster slots is given back slot by slot, each at the Redis time its own
     * script decided it.
     */
    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        List<List<Integer>> groups = groups(requests);
        for (int g = 0; g < groups.size(); g++) {
            List<LimitRequest> selected = SplitDecision.select(requests, groups.get(g));
            run(REFUND, now(), bytes(Long.toString(decidedAtMillis(taken, groups.size(), g))),
                    keysOf(selected), limitsOf(selected), costsOf(selected));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * One script call per Cluster slot whose limits charge other than their cost (one in all off a
     * Cluster), by Redis time: permits given back leave the sub-window they were taken in; permits
     * charged beyond the cost count now. Limits charged exactly their cost cost no round trip.
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        settle(now(), requests, taken, charges);
    }

    /**
     * Settles at a given time instead of Redis time: for tests that replay a schedule.
     * @param nowMillis the time of the settle
     * @param requests the requests admitted together
     * @param taken their decisions
     * @param charges what each finally costs
     */
    void settleAt(long nowMillis, List<LimitRequest> requests, Decisions taken, long[] charges) {
        settle(bytes(Long.toString(nowMillis)), requests, taken, charges);
    }

    private void settle(byte[] time, List<LimitRequest> requests, Decisions taken, long[] charges) {
        List<List<Integer>> groups = groups(requests);
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> changed = new ArrayList<>();
            for (int index : groups.get(g)) {
                if (charges[index] != requests.get(index).cost()) {
                    changed.add(index);
                }
            }
            if (changed.isEmpty()) {
                continue;
            }
            List<LimitRequest> selected = SplitDecision.select(requests, changed);
            long[] differences = new long[changed.size()];
            for (int i = 0; i < differences.length; i++) {
                differences[i] = charges[changed.get(i)] - selected.get(i).cost();
            }
            run(SETTLE, time, bytes(Long.toString(decidedAtMillis(taken, groups.size(), g))), keysOf(selected),
                    limitsOf(selected), differences);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Deletes every counter under the key prefix ({@link RedisKeys#counterPattern()}), scanning in
     * pages; the run-time limit changes under the prefix stay.
     */
    @Override
    public void resetAll() {
        this.runner.deleteMatching(this.keys.counterPattern());
    }

    /** When Redis decided group {@code g} of a call: by its own script when decided slot by slot. */
    private static long decidedAtMillis(Decisions taken, int groups, int g) {
        return (groups > 1 && taken.parts().size() == groups) ? taken.parts().get(g).decidedAtMillis()
                : taken.decidedAtMillis();
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return usage(limit, key).decision();
    }

    /**
     * {@inheritDoc}
     * <p>
     * One script call, which counts nothing: the peek's reply carries the count after the decisions.
     */
    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        List<Long> reply = run(PEEK, now(), REDIS_TIME, new byte[][] { this.keys.counterKey(limit.name(), key) },
                List.of(limit), new long[] { 1 });
        return new KeyUsage(reply.get(2 + 4), decision(reply, 0, limit.limit()));
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        run(RESET, now(), REDIS_TIME, new byte[][] { this.keys.counterKey(limit.name(), key) }, List.of(limit),
                new long[] { 1 });
    }

    /**
     * Decides at a given time instead of Redis time: for tests that replay a schedule.
     * @param nowMillis the time to decide at
     * @param requests the limits asked
     * @return the decisions, from one script run (the keys must share a slot)
     */
    Decisions tryAcquireAllAt(long nowMillis, List<LimitRequest> requests) {
        List<Long> reply = run(ACQUIRE, bytes(Long.toString(nowMillis)), REDIS_TIME, keysOf(requests),
                limitsOf(requests), costsOf(requests));
        return decisions(reply, requests);
    }

    /**
     * Peeks at a given time instead of Redis time: for tests.
     * @param nowMillis the time to peek at
     * @param limit the limit
     * @param key the key
     * @return what a call of cost 1 would be told
     */
    Decision peekAt(long nowMillis, LimitDefinition limit, String key) {
        List<Long> reply = run(PEEK, bytes(Long.toString(nowMillis)), REDIS_TIME,
                new byte[][] { this.keys.counterKey(limit.name(), key) }, List.of(limit), new long[] { 1 });
        return decision(reply, 0, limit.limit());
    }

    /**
     * Refunds at a given time instead of Redis time: for tests that replay a schedule.
     * @param nowMillis the time of the refund
     * @param requests the requests admitted together (their keys share a slot)
     * @param taken their decisions
     */
    void refundAt(long nowMillis, List<LimitRequest> requests, Decisions taken) {
        run(REFUND, bytes(Long.toString(nowMillis)), bytes(Long.toString(taken.decidedAtMillis())), keysOf(requests),
                limitsOf(requests), costsOf(requests));
    }

    /**
     * One script run over requests whose keys share a slot. The script refuses to change anything
     * after the caller's deadline; should it still answer "admitted" after the caller stopped waiting,
     * the permits are given back, so that a decision nobody used does not count.
     */
    private Decisions decide(List<LimitRequest> requests) {
        byte[][] counterKeys = keysOf(requests);
        List<Long> reply;
        try {
            reply = this.runner.run(counterKeys, acquireArguments(requests));
        }
        catch (RedisTimeoutException ex) {
            throw givenBackIfLate(ex, counterKeys, requests);
        }
        return decided(reply, requests);
    }

    /**
     * {@inheritDoc}
     * <p>
     * Keys in one slot are decided by one script run on the runner's asynchronous API (Lettuce's:
     * no thread waits); a call across Cluster slots is split as usual, on {@code blocking}.
     */
    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        if (requests.isEmpty() || groups(requests).size() > 1) {
            return RateLimitBackend.super.tryAcquireAllAsync(requests, blocking);
        }
        byte[][] counterKeys = keysOf(requests);
        return this.runner.runAsync(counterKeys, acquireArguments(requests), blocking).handle((reply, failure) -> {
            if (failure == null) {
                return decided(reply, requests);
            }
            RuntimeException cause = RedisBackendException.of(failure);
            throw (cause instanceof RedisTimeoutException timeout) ? givenBackIfLate(timeout, counterKeys, requests)
                    : cause;
        });
    }

    /** The arguments of an acquisition, with the Redis time after which its caller no longer waits. */
    private byte[][] acquireArguments(List<LimitRequest> requests) {
        return arguments(ACQUIRE, now(), deadline(), limitsOf(requests), costsOf(requests));
    }

    /** The Redis time after which the caller no longer waits, or empty for none (and for a test's fixed time). */
    private byte[] deadline() {
        long deadline = this.runner.redisDeadlineMillis();
        return (deadline < 0 || this.fixedTime != null) ? REDIS_TIME : bytes(Long.toString(deadline));
    }

    /**
     * The script refuses to change anything after the caller's deadline; should it still answer
     * "admitted" after the caller stopped waiting, the permits are given back, so that a decision
     * nobody used does not count.
     */
    private RedisTimeoutException givenBackIfLate(RedisTimeoutException timeout, byte[][] counterKeys,
            List<LimitRequest> requests) {
        timeout.lateReply().thenAccept((late) -> {
            if (late.get(0) == 1) {
                this.runner.runLater(counterKeys, arguments(REFUND, now(), bytes(Long.toString(late.get(1))),
                        limitsOf(requests), costsOf(requests)));
            }
        });
        return timeout;
    }

    /** The decisions of a script's reply; one Redis ran after the caller's deadline is a late call. */
    private Decisions decided(List<Long> reply, List<LimitRequest> requests) {
        if (reply.get(0) < 0) {
            throw RedisTimeoutException.slow("Redis ran the decision after the limiter's timeout",
                    CompletableFuture.completedFuture(reply));
        }
        return decisions(reply, requests);
    }

    /**
     * Counts permits that the failure policy admitted while Redis did not decide, now and whether or
     * not they fit (as a settle counts a charge beyond the cost): up to {@value #KEYS_PER_REPORT}
     * keys (of one Cluster slot) per script call, one call at a time, in the background.
     * @param admitted the permits of each key
     * @return completes with what could not be counted (Redis failed), empty when all was
     */
    CompletionStage<List<UnreportedAdmissions.Admitted>> countLater(List<UnreportedAdmissions.Admitted> admitted) {
        List<List<UnreportedAdmissions.Admitted>> calls = new ArrayList<>();
        Map<Integer, List<UnreportedAdmissions.Admitted>> bySlot = new LinkedHashMap<>();
        for (UnreportedAdmissions.Admitted each : admitted) {
            int slot = (this.slotOf != null) ? this.slotOf.applyAsInt(this.keys.counterKey(each.limit().name(),
                    each.key())) : 0;
            List<UnreportedAdmissions.Admitted> call = bySlot.computeIfAbsent(slot, (ignored) -> new ArrayList<>());
            call.add(each);
            if (call.size() == KEYS_PER_REPORT) {
                calls.add(bySlot.remove(slot));
            }
        }
        calls.addAll(bySlot.values());
        return countInTurn(calls, 0);
    }

    private CompletionStage<List<UnreportedAdmissions.Admitted>> countInTurn(
            List<List<UnreportedAdmissions.Admitted>> calls, int next) {
        if (next == calls.size()) {
            return CompletableFuture.completedFuture(List.of());
        }
        List<UnreportedAdmissions.Admitted> call = calls.get(next);
        byte[][] counterKeys = new byte[call.size()][];
        long[] permits = new long[call.size()];
        List<LimitDefinition> limits = new ArrayList<>(call.size());
        for (int i = 0; i < call.size(); i++) {
            counterKeys[i] = this.keys.counterKey(call.get(i).limit().name(), call.get(i).key());
            permits[i] = call.get(i).permits();
            limits.add(call.get(i).limit());
        }
        CompletionStage<List<Long>> sent;
        try {
            sent = this.runner.runLater(counterKeys, arguments(SETTLE, now(), ZERO, limits, permits));
        }
        catch (RuntimeException ex) {
            sent = CompletableFuture.failedFuture(ex);
        }
        return sent.handle((reply, failure) -> failure).thenCompose((failure) -> {
            if (failure == null) {
                return countInTurn(calls, next + 1);
            }
            List<UnreportedAdmissions.Admitted> notCounted = new ArrayList<>();
            calls.subList(next, calls.size()).forEach(notCounted::addAll);
            return CompletableFuture.completedFuture(notCounted);
        });
    }

    /**
     * Takes a lease: the call's {@code cost} and up to {@code wanted - cost} permits more, counted in
     * Redis at once in the current sub-window, by one script call. Redis gives at most half of what is
     * left after the call, so a key near its limit is decided permit by permit. A limit of the sliding
     * log, or a call while Redis time stepped back, takes only its cost.
     * @param limit a sliding-window-counter limit
     * @param key the counter key
     * @param cost the call's permits
     * @param wanted the permits this instance expects to admit before the sub-window ends, cost included
     * @return the call's decision and the lease; nothing taken when rejected
     * @throws RedisBackendException when Redis fails or does not answer in time (a lease Redis takes after
     * the caller stopped waiting is given back)
     */
    public Lease lease(LimitDefinition limit, String key, long cost, long wanted) {
        LimitRequest.check(limit, key, cost);
        byte[][] counterKeys = { this.keys.counterKey(limit.name(), key) };
        try {
            return leased(this.runner.run(counterKeys, leaseArguments(limit, cost, wanted)), limit);
        }
        catch (RedisTimeoutException ex) {
            throw leaseGivenBackIfLate(ex, counterKeys, limit);
        }
    }

    /**
     * {@link #lease} on the runner's asynchronous API.
     * @param limit a sliding-window-counter limit
     * @param key the counter key
     * @param cost the call's permits; 0 to top up a lease without a call
     * @param wanted the permits this instance expects to admit before the sub-window ends, cost included
     * @param blocking where a runner without an asynchronous API waits
     * @return the lease, or a stage failed with a {@link RedisBackendException}
     */
    public CompletionStage<Lease> leaseAsync(LimitDefinition limit, String key, long cost, long wanted,
            Executor blocking) {
        LimitRequest.check(limit, key, Math.max(cost, 1));
        byte[][] counterKeys = { this.keys.counterKey(limit.name(), key) };
        return this.runner.runAsync(counterKeys, leaseArguments(limit, cost, wanted), blocking)
                .handle((reply, failure) -> {
                    if (failure == null) {
                        return leased(reply, limit);
                    }
                    RuntimeException cause = RedisBackendException.of(failure);
                    throw (cause instanceof RedisTimeoutException timeout)
                            ? leaseGivenBackIfLate(timeout, counterKeys, limit) : cause;
                });
    }

    /**
     * Gives a lease's unused permits back to the sub-window they were taken in, unless the counter
     * was reset or replaced since (its creation time differs), in the background.
     * @param limit the limit the lease was taken under
     * @param key the counter key
     * @param lease the lease
     * @param unused its permits not admitted
     * @return when Redis answered; failed when it did not
     */
    public CompletionStage<List<Long>> giveBack(LimitDefinition limit, String key, Lease lease, long unused) {
        byte[][] counterKeys = { this.keys.counterKey(limit.name(), key) };
        return this.runner.runLater(counterKeys, giveBackArguments(limit, lease.decidedAtMillis(), unused,
                lease.counterCreatedAtMillis()));
    }

    private byte[][] leaseArguments(LimitDefinition limit, long cost, long wanted) {
        byte[][] args = Arrays.copyOf(arguments(LEASE, now(), deadline(), List.of(limit), new long[] { cost }), 9);
        args[8] = bytes(Long.toString(Math.max(wanted, cost)));
        return args;
    }

    private byte[][] giveBackArguments(LimitDefinition limit, long decidedAtMillis, long unused, long createdAtMillis) {
        byte[][] args = Arrays.copyOf(arguments(GIVE_BACK, now(), bytes(Long.toString(decidedAtMillis)),
                List.of(limit), new long[] { unused }), 9);
        args[8] = bytes(Long.toString(createdAtMillis));
        return args;
    }

    /** A lease Redis took after its caller stopped waiting is given back whole. */
    private RedisTimeoutException leaseGivenBackIfLate(RedisTimeoutException timeout, byte[][] counterKeys,
            LimitDefinition limit) {
        timeout.lateReply().thenAccept((late) -> {
            if (late.get(0) == 1 && late.get(6) > 0) {
                this.runner.runLater(counterKeys, giveBackArguments(limit, late.get(1), late.get(6), late.get(8)));
            }
        });
        return timeout;
    }

    private static Lease leased(List<Long> reply, LimitDefinition limit) {
        if (reply.get(0) < 0) {
            throw RedisTimeoutException.slow("Redis ran the lease after the limiter's timeout",
                    CompletableFuture.completedFuture(reply));
        }
        return new Lease(decision(reply, 0, limit.limit()), reply.get(6), reply.get(1), reply.get(7), reply.get(8));
    }

    /**
     * A lease as Redis took it.
     *
     * @param decision the decision of the call that took it (its remaining counts the whole lease as used)
     * @param taken the permits counted in all, the call's cost included; 0 when rejected
     * @param decidedAtMillis the Redis time it was taken at, which names its sub-window
     * @param subWindowEndMillis the Redis time its sub-window ends at: the lease ends by then
     * @param counterCreatedAtMillis the counter's creation time, which its give-back names
     */
    public record Lease(Decision decision, long taken, long decidedAtMillis, long subWindowEndMillis,
            long counterCreatedAtMillis) {
    }

    /** Requests by hash slot, in slot order; one group when Redis is not a Cluster. */
    private List<List<Integer>> groups(List<LimitRequest> requests) {
        List<Integer> all = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            all.add(i);
        }
        if (this.slotOf == null || requests.size() == 1) {
            return List.of(all);
        }
        Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
        all.stream().sorted((a, b) -> Integer.compare(slot(requests.get(a)), slot(requests.get(b))))
                .forEach((i) -> bySlot.computeIfAbsent(slot(requests.get(i)), (slot) -> new ArrayList<>()).add(i));
        return List.copyOf(bySlot.values());
    }

    private int slot(LimitRequest request) {
        return this.slotOf.applyAsInt(this.keys.counterKey(request.limit().name(), request.key()));
    }

    private List<Long> run(byte[] operation, byte[] time, byte[] acquiredAt, byte[][] counterKeys,
            List<LimitDefinition> limits, long[] costs) {
        return this.runner.run(counterKeys, arguments(operation, time, acquiredAt, limits, costs));
    }

    private static byte[][] arguments(byte[] operation, byte[] time, byte[] acquiredAt, List<LimitDefinition> limits,
            long[] costs) {
        byte[][] args = new byte[3 + 5 * limits.size()][];
        args[0] = operation;
        args[1] = time;
        args[2] = acquiredAt;
        for (int i = 0; i < limits.size(); i++) {
            LimitDefinition limit = limits.get(i);
            checkLimit(limit);
            int base = 3 + 5 * i;
            args[base] = (limit.algorithm() == Algorithm.SLIDING_LOG) ? ONE : ZERO;
            args[base + 1] = bytes(Long.toString(limit.windowMillis()));
            args[base + 2] = bytes(Integer.toString(limit.subWindows()));
            args[base + 3] = bytes(Long.toString(limit.limit()));
            args[base + 4] = bytes(Long.toString(costs[i]));
        }
        return args;
    }

    /**
     * The shard that holds a key's counter: on Cluster the node that serves its slot now, so that
     * failures, the breaker and fallbacks stay on it; {@code ""} elsewhere.
     * @param limit the limit
     * @param key the counter key
     * @return the shard's id
     */
    public String shardOf(LimitDefinition limit, String key) {
        return (this.slotOf == null) ? "" : this.runner.nodeOf(this.keys.counterKey(limit.name(), key));
    }

    /**
     * The shards that hold counters now.
     * @return as {@link #shardOf} names them
     */
    public Set<String> shards() {
        return (this.slotOf == null) ? Set.of("") : this.runner.nodes();
    }

    /**
     * Refuses a limit that Redis's Lua, which counts in doubles, cannot count exactly.
     * @param limit a limit's definition
     * @throws IllegalArgumentException when its limit is above {@link #MAX_LIMIT}
     */
    public static void checkLimit(LimitDefinition limit) {
        if (limit.limit() > MAX_LIMIT) {
            throw new IllegalArgumentException("Limit '" + limit.name() + "' is " + limit.limit()
                    + " permits, but Redis counts exactly only up to " + MAX_LIMIT + " (2^53 - 1)");
        }
    }

    private static Decisions decisions(List<Long> reply, List<LimitRequest> requests) {
        List<Decision> decisions = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            decisions.add(decision(reply, i, requests.get(i).limit().limit()));
        }
        return new Decisions(reply.get(0) == 1, List.copyOf(decisions), reply.get(1));
    }

    private static Decision decision(List<Long> reply, int index, long limit) {
        int base = 2 + 4 * index;
        return new Decision(reply.get(base) == 1, limit, reply.get(base + 1), reply.get(base + 2), reply.get(base + 3));
    }

    private byte[][] keysOf(List<LimitRequest> requests) {
        byte[][] counterKeys = new byte[requests.size()][];
        for (int i = 0; i < requests.size(); i++) {
            counterKeys[i] = this.keys.counterKey(requests.get(i).limit().name(), requests.get(i).key());
        }
        return counterKeys;
    }

    private static List<LimitDefinition> limitsOf(List<LimitRequest> requests) {
        return requests.stream().map(LimitRequest::limit).toList();
    }

    private static long[] costsOf(List<LimitRequest> requests) {
        return requests.stream().mapToLong(LimitRequest::cost).toArray();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

}
