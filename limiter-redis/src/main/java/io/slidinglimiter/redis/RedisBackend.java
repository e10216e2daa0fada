package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.KeyUsage;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.failover.LeaseGrant;
import io.slidinglimiter.failover.LeaseServer;
import io.slidinglimiter.failover.RemoteBackend;
import io.slidinglimiter.internal.SplitDecision;

import static io.slidinglimiter.redis.ScriptMessages.ACQUIRE;
import static io.slidinglimiter.redis.ScriptMessages.PEEK;
import static io.slidinglimiter.redis.ScriptMessages.REDIS_TIME;
import static io.slidinglimiter.redis.ScriptMessages.REFUND;
import static io.slidinglimiter.redis.ScriptMessages.RESET;
import static io.slidinglimiter.redis.ScriptMessages.SETTLE;
import static io.slidinglimiter.redis.ScriptMessages.arguments;
import static io.slidinglimiter.redis.ScriptMessages.bytes;
import static io.slidinglimiter.redis.ScriptMessages.costsOf;
import static io.slidinglimiter.redis.ScriptMessages.limitsOf;

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
public final class RedisBackend implements RemoteBackend, LeaseServer {

    /** The largest limit Redis counts exactly: its Lua numbers are doubles. */
    public static final long MAX_LIMIT = ScriptMessages.MAX_LIMIT;

    private final RedisScriptRunner runner;

    private final RedisKeys keys;

    private final RedisRoutes routes;

    /** Counts what fallbacks admitted. */
    private final AdmissionReports reports;

    /** The time every script is handed, for tests that replay a schedule; null in production: Redis time. */
    private final LongSupplier fixedTime;

    /**
     * Creates the backend.
     * @param runner runs the script
     * @param keys the key scheme
     * @param slotOf the Cluster hash slot of a key, or null when Redis is not a Cluster
     */
    public RedisBackend(LettuceScriptRunner runner, RedisKeys keys, ToIntFunction<byte[]> slotOf) {
        this(runner, keys, slotOf, null);
    }

    RedisBackend(RedisScriptRunner runner, RedisKeys keys, ToIntFunction<byte[]> slotOf, LongSupplier fixedTime) {
        this.runner = runner;
        this.keys = keys;
        this.routes = new RedisRoutes(runner, keys, slotOf);
        this.fixedTime = fixedTime;
        this.reports = new AdmissionReports(runner, keys, this.routes, this::now);
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
        return (this.fixedTime != null) ? bytes(this.fixedTime.getAsLong()) : REDIS_TIME;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        List<LimitRequest> requests = List.of(new LimitRequest(limit, key, cost));
        return decide(requests, this.routes.of(requests)).get(0);
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        if (requests.isEmpty()) {
            throw new IllegalArgumentException("A decision needs at least one limit");
        }
        List<List<Integer>> groups = this.routes.groups(requests);
        if (groups.size() == 1) {
            return decide(requests, this.routes.of(requests));
        }
        return SplitDecision.decide(requests, groups, new SplitDecision.Groups() {

            @Override
            public Decisions tryAcquireAll(int group, List<LimitRequest> selected) {
                RedisRoutes.Route route = RedisBackend.this.routes.of(selected);
                try {
                    return decide(selected, route);
                }
                catch (RuntimeException ex) {
                    throw new RedisShardException(route.shard(), ex);
                }
            }

            @Override
            public void refund(int group, List<LimitRequest> selected, Decisions taken) {
                RedisBackend.this.refund(selected, taken);
            }

        });
    }

    /**
     * One script run over requests whose keys share a slot. The script refuses to change anything
     * after the caller's deadline; should it still answer "admitted" after the caller stopped waiting,
     * the permits are given back, so that a decision nobody used does not count.
     * @param requests the limits asked
     * @param route their keys and shard
     * @return the decisions
     */
    Decisions decide(List<LimitRequest> requests, RedisRoutes.Route route) {
        List<Long> reply;
        try {
            reply = this.runner.run(route.shard(), route.keys(), acquireArguments(requests, route.shard()));
        }
        catch (RedisTimeoutException ex) {
            throw givenBackIfLate(ex, route.keys(), requests);
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
        if (requests.isEmpty() || !this.routes.oneGroup(requests)) {
            return RemoteBackend.super.tryAcquireAllAsync(requests, blocking);
        }
        return decideAsync(requests, this.routes.of(requests), blocking);
    }

    /**
     * {@link #decide} on the runner's asynchronous API.
     * @param requests the limits asked, their keys in one slot
     * @param route their keys and shard
     * @param blocking where a runner without an asynchronous API waits
     * @return the decisions, or a stage failed with a {@link RedisBackendException}
     */
    CompletionStage<Decisions> decideAsync(List<LimitRequest> requests, RedisRoutes.Route route, Executor blocking) {
        return this.runner.runAsync(route.shard(), route.keys(), acquireArguments(requests, route.shard()), blocking)
                .handle((reply, failure) -> {
                    if (failure == null) {
                        return decided(reply, requests);
                    }
                    RuntimeException cause = RedisBackendException.of(failure);
                    throw (cause instanceof RedisTimeoutException timeout)
                            ? givenBackIfLate(timeout, route.keys(), requests) : cause;
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
        refund(now(), requests, taken);
    }

    private void refund(byte[] time, List<LimitRequest> requests, Decisions taken) {
        List<List<Integer>> groups = this.routes.groups(requests);
        for (int g = 0; g < groups.size(); g++) {
            List<LimitRequest> selected = SplitDecision.select(requests, groups.get(g));
            Decisions part = partOf(taken, groups.size(), g);
            this.runner.run(this.routes.of(selected).keys(), ScriptMessages.undo(REFUND, time, part.decidedAtMillis(),
                    part.generation(), limitsOf(selected), costsOf(selected)));
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

    private void settle(byte[] time, List<LimitRequest> requests, Decisions taken, long[] charges) {
        List<List<Integer>> groups = this.routes.groups(requests);
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
            Decisions part = partOf(taken, groups.size(), g);
            this.runner.run(this.routes.of(selected).keys(), ScriptMessages.undo(SETTLE, time, part.decidedAtMillis(),
                    part.generation(), limitsOf(selected), differences));
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

    /** How Redis decided group {@code g} of a call (its time, its generation): by its own script when decided slot by slot. */
    private static Decisions partOf(Decisions taken, int groups, int g) {
        return (groups > 1 && taken.parts().size() == groups) ? taken.parts().get(g) : taken;
    }

    /** Redis's Lua counts in doubles: {@value RedisBackend#MAX_LIMIT} (2^53 - 1) at the most. */
    @Override
    public long largestLimit(LimitDefinition limit) {
        return MAX_LIMIT;
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
        return usage(limit, key, 1);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        LimitRequest.check(limit, key, cost);
        List<Long> reply = this.runner.run(new byte[][] { this.keys.counterKey(limit.name(), key) },
                arguments(PEEK, now(), REDIS_TIME, List.of(limit), new long[] { cost }));
        return new KeyUsage(ScriptMessages.used(reply), ScriptMessages.decision(reply, 0, limit.limit()));
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        LimitRequest.check(limit, key, 1);
        runOnKey(RESET, now(), limit, key);
    }

    private List<Long> runOnKey(byte[] operation, byte[] time, LimitDefinition limit, String key) {
        return this.runner.run(new byte[][] { this.keys.counterKey(limit.name(), key) },
                arguments(operation, time, REDIS_TIME, List.of(limit), new long[] { 1 }));
    }

    /** Decides at a given time instead of Redis time, by one script run (the keys share a slot): for tests. */
    Decisions tryAcquireAllAt(long nowMillis, List<LimitRequest> requests) {
        return ScriptMessages.decisions(this.runner.run(this.routes.of(requests).keys(),
                arguments(ACQUIRE, bytes(nowMillis), REDIS_TIME, limitsOf(requests), costsOf(requests))), requests);
    }

    /** Peeks at a given time instead of Redis time: for tests. */
    Decision peekAt(long nowMillis, LimitDefinition limit, String key) {
        return ScriptMessages.decision(runOnKey(PEEK, bytes(nowMillis), limit, key), 0, limit.limit());
    }

    /** Refunds at a given time instead of Redis time: for tests that replay a schedule. */
    void refundAt(long nowMillis, List<LimitRequest> requests, Decisions taken) {
        refund(bytes(nowMillis), requests, taken);
    }

    /** Settles at a given time instead of Redis time: for tests that replay a schedule. */
    void settleAt(long nowMillis, List<LimitRequest> requests, Decisions taken, long[] charges) {
        settle(bytes(nowMillis), requests, taken, charges);
    }

    /** The arguments of an acquisition, with the Redis time after which its caller no longer waits. */
    private byte[][] acquireArguments(List<LimitRequest> requests, String shard) {
        return ScriptMessages.acquire(now(), deadline(shard), requests);
    }

    /** The Redis time after which a call's caller no longer waits, or empty for none (and for a fixed time). */
    private byte[] deadline(String shard) {
        long deadline = this.runner.redisDeadlineMillis(shard);
        return (deadline < 0 || this.fixedTime != null) ? REDIS_TIME : bytes(deadline);
    }

    /**
     * Should Redis still answer "admitted" after the caller stopped waiting, the permits are given
     * back, so that a decision nobody used does not count.
     */
    private RedisTimeoutException givenBackIfLate(RedisTimeoutException timeout, byte[][] counterKeys,
            List<LimitRequest> requests) {
        timeout.lateReply().thenAccept((late) -> {
            if (late.get(0) == 1) {
                this.runner.runLater(counterKeys, ScriptMessages.undo(REFUND, now(), late.get(1),
                        ScriptMessages.generation(late, requests.size()), limitsOf(requests), costsOf(requests)));
            }
        });
        return timeout;
    }

    /** The decisions of a script's reply; one Redis ran after the caller's deadline is a late call. */
    private static Decisions decided(List<Long> reply, List<LimitRequest> requests) {
        if (ScriptMessages.ranLate(reply)) {
            throw RedisTimeoutException.slow("Redis ran the decision after the limiter's timeout",
                    CompletableFuture.completedFuture(reply));
        }
        return ScriptMessages.decisions(reply, requests);
    }

    /**
     * Takes a lease: the call's {@code cost} and up to {@code wanted - cost} permits more, counted in
     * Redis at once in the current sub-window, by one script call. Redis gives at most half of what is
     * left after the call, so a key near its limit is decided permit by permit. A limit of the sliding
     * log, or a call while Redis time stepped back, takes only its cost. A lease Redis takes after
     * the caller stopped waiting is given back whole.
     * @param limit a sliding-window-counter limit
     * @param key the counter key
     * @param cost the call's permits; 0 to top up a lease without a call
     * @param wanted the permits this instance expects to admit before the sub-window ends, cost included
     * @param blocking where a runner without an asynchronous API waits; null to wait on this thread
     * @return the lease, or a stage failed with a {@link RedisBackendException}
     */
    @Override
    public CompletionStage<LeaseGrant> lease(LimitDefinition limit, String key, long cost, long wanted,
            Executor blocking) {
        RedisRoutes.Route route = this.routes.of(limit, key);
        byte[][] args = ScriptMessages.lease(now(), deadline(route.shard()), limit, cost, wanted);
        CompletionStage<List<Long>> reply;
        if (blocking != null) {
            reply = this.runner.runAsync(route.shard(), route.keys(), args, blocking);
        }
        else {
            try {
                reply = CompletableFuture.completedFuture(this.runner.run(route.shard(), route.keys(), args));
            }
            catch (RuntimeException ex) {
                reply = CompletableFuture.failedFuture(ex);
            }
        }
        return reply.handle((taken, failure) -> {
            if (failure == null) {
                if (ScriptMessages.ranLate(taken)) {
                    throw RedisTimeoutException.slow("Redis ran the lease after the limiter's timeout",
                            CompletableFuture.completedFuture(taken));
                }
                return ScriptMessages.grant(taken, limit);
            }
            RuntimeException cause = RedisBackendException.of(failure);
            if (cause instanceof RedisTimeoutException timeout) {
                timeout.lateReply().thenAccept((late) -> {
                    if (ScriptMessages.tookPermits(late)) {
                        this.runner.runLater(route.keys(), ScriptMessages.giveBackLate(now(), limit, late));
                    }
                });
            }
            throw cause;
        });
    }

    /**
     * Gives a lease's unused permits back to the sub-window they were taken in, unless the counter
     * was reset or replaced since (its creation time differs), in the background.
     * @param limit the limit the lease was taken under
     * @param key the counter key
     * @param grant the lease as Redis took it
     * @param unused its permits not admitted
     * @return when Redis answered; failed when it did not
     */
    @Override
    public CompletionStage<List<Long>> giveBack(LimitDefinition limit, String key, LeaseGrant grant, long unused) {
        return this.runner.runLater(new byte[][] { this.keys.counterKey(limit.name(), key) },
                ScriptMessages.giveBack(now(), limit, grant.decidedAtMillis(), unused, grant.counterCreatedAtMillis()));
    }

    /**
     * Asks Redis whether it answers within the timeout and holds the script.
     * @return whether the script is loaded
     */
    boolean isScriptLoaded() {
        return this.runner.isScriptLoaded();
    }

    @Override
    public String serverName() {
        return "Redis";
    }

    @Override
    public String propertyPrefix() {
        return "limiter.redis";
    }

    @Override
    public String shardOf(LimitDefinition limit, String key) {
        return this.routes.shardOf(limit, key);
    }

    @Override
    public Set<String> shards() {
        return this.routes.shards();
    }

    /** Counts them as a settle counts a charge beyond the cost ({@link AdmissionReports}). */
    @Override
    public CompletionStage<List<Admitted>> countAdmitted(List<Admitted> admitted) {
        return this.reports.count(admitted);
    }

    /** Also a script error Redis answered that is not one of its conditions ({@link RedisFailures}). */
    @Override
    public boolean isLimitsOwn(Throwable failure) {
        return RemoteBackend.super.isLimitsOwn(failure) || RedisFailures.isScriptError(failure);
    }

    @Override
    public boolean answered(Throwable failure) {
        return RedisFailures.answered(failure);
    }

    /**
     * Refuses a limit that Redis's Lua, which counts in doubles, cannot count exactly.
     * @param limit a limit's definition
     * @throws IllegalArgumentException when its limit is above {@link #MAX_LIMIT}
     */
    public static void checkLimit(LimitDefinition limit) {
        ScriptMessages.checkLimit(limit);
    }

}
