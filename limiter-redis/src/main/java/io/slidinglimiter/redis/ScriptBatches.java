package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

/**
 * Decisions that wait for one another, sent together.
 * <p>
 * Each lane (a connection, or on Cluster one
 * hash slot of it) has at most {@link #IN_FLIGHT} script calls in flight; decisions that come while
 * they are sent wait, and when one answers they go as one script call (the joined script's batch
 * entry, {@code batch.lua}) that decides each exactly as if it had come alone. A decision that finds
 * fewer calls in flight goes alone at once: no timer, no wait when there is nothing to wait for.
 * <p>
 * What waits goes in the order it came, in batches of up to {@link #MAX_BATCH}; a reset always
 * goes alone (see {@code batch.lua}). Each decision keeps its own reply and its own failure: a batch
 * that fails whole (the connection lost) fails each of its decisions with the same cause, and a
 * decision the script could not decide fails alone. Timeouts stay each caller's own: a caller that
 * stops waiting leaves its decision to be sent, and the deadline it carries makes Redis change
 * nothing for it, as for a late call sent alone.
 * <p>
 * A lane whose calls in flight answer nothing for the runner's timeout (a stalled or dead node, a
 * lost connection) forgets them: the next decision goes at once, with what waits, so that a Cluster
 * slot moved to a promoted replica is decided there while the call to the dead master still hangs.
 */
final class ScriptBatches {

    /** The most decisions one script call decides: a batch holds Redis for well under a millisecond. */
    static final int MAX_BATCH = 64;

    /**
     * The script calls a lane keeps in flight before decisions wait: two, so that Redis decides one
     * while the reply of the other is read and the next batch is sent. With one, Redis idled between
     * batches and four callers decided less than without batching (BENCHMARKS.md).
     */
    static final int IN_FLIGHT = 2;

    private static final byte[] BATCH = "batch".getBytes(StandardCharsets.US_ASCII);

    /**
     * A decision's number of arguments in a batch that says: the previous decision's but {@code ARGV[3]}
     * (a deadline, or an undo's time), the one argument sent for it.
     */
    private static final byte[] BUT_DEADLINE = ScriptMessages.bytes(-1);

    /** Where a decision's deadline (or an undo's time) is among its arguments: {@code ARGV[3]}. */
    private static final int DEADLINE = 2;

    /** Sends the script: once for one decision, once for a batch. */
    @FunctionalInterface
    interface Script {

        /**
         * Sends the script to a node.
         * @param keys its {@code KEYS}
         * @param args its {@code ARGV}
         * @param node the node, as {@link RedisScriptRunner#nodeOf} names it
         * @param redisTime whether the reply carries Redis's clock (a decision sent alone that read it)
         * @return its reply
         */
        CompletableFuture<List<Object>> send(byte[][] keys, byte[][] args, String node, boolean redisTime);

    }

    private final Script script;

    /** The lane of a standalone or Sentinel connection. */
    private final Lane connection = new Lane();

    /** The lanes of a Cluster connection: one per hash slot, made when first used. */
    private final Map<Integer, Lane> slots = new ConcurrentHashMap<>();

    /** Notes Redis's clock from a decision's reply that read it. */
    private final ReplyWatch replies;

    /** The batches sent: script calls of more than one decision. */
    private final LongAdder batches = new LongAdder();

    /** The decisions those batches carried. */
    private final LongAdder batchedDecisions = new LongAdder();

    /** How long the calls in flight may answer nothing before what waits for them goes without them. */
    private final long stuckNanos;

    private volatile boolean enabled = true;

    ScriptBatches(Script script, ReplyWatch replies, long stuckNanos) {
        this.script = script;
        this.replies = replies;
        this.stuckNanos = stuckNanos;
    }

    void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    boolean isEnabled() {
        return this.enabled;
    }

    /**
     * Sends a decision: alone now if its lane has fewer than {@link #IN_FLIGHT} calls in flight (or
     * batching is off, or the connection not yet open: whether it is a Cluster's is not known), else
     * with the others waiting when a call in flight answers.
     * @param opened the connection, if open
     * @param keys its {@code KEYS}
     * @param args its {@code ARGV}
     * @param node its node
     * @return its reply, or its failure
     */
    @SuppressWarnings("unchecked")
    CompletableFuture<List<Long>> send(LettuceConnection.Opened opened, byte[][] keys, byte[][] args, String node) {
        if (!this.enabled || opened == null) {
            return (CompletableFuture<List<Long>>) (CompletableFuture<?>) sendAlone(keys, args, node);
        }
        Lane lane = (opened.stateful() instanceof StatefulRedisClusterConnection<?, ?>) ? slot(SlotHash.getSlot(keys[0]))
                : this.connection;
        Waiting waiting = null;
        List<List<Waiting>> calls = null;
        lane.lock.lock();
        try {
            long now = System.nanoTime();
            if (lane.inFlight < IN_FLIGHT) {
                lane.inFlight++;
                lane.progressNanos = now;
            }
            else {
                waiting = new Waiting(keys, args, node, new CompletableFuture<>());
                lane.waiting.add(waiting);
                if (now - lane.progressNanos > this.stuckNanos) {
                    // Nothing in flight answered for a timeout (a stalled or dead node, a lost
                    // connection): the lane forgets those calls, and what waits goes now.
                    lane.inFlight = 0;
                    calls = drain(lane, now);
                }
            }
        }
        finally {
            lane.lock.unlock();
        }
        if (waiting != null) {
            if (calls != null) {
                calls.forEach((call) -> send(lane, call));
            }
            return waiting.reply;
        }
        // The caller gets the reply once the lane has counted it: woken first, it would send its next
        // decision while the connection's thread still held the lane, and wait for it.
        CompletableFuture<List<Object>> reply = sendAlone(keys, args, node)
                .whenComplete((values, failure) -> answered(lane));
        return (CompletableFuture<List<Long>>) (CompletableFuture<?>) reply;
    }

    private Lane slot(int slot) {
        Lane lane = this.slots.get(slot);
        return (lane != null) ? lane : this.slots.computeIfAbsent(slot, (ignored) -> new Lane());
    }

    private CompletableFuture<List<Object>> sendAlone(byte[][] keys, byte[][] args, String node) {
        try {
            return this.script.send(keys, args, node, readsRedisTime(args));
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /** A call of the lane answered: what waited for it goes now, in as few calls as the rules allow. */
    private void answered(Lane lane) {
        List<List<Waiting>> calls;
        lane.lock.lock();
        try {
            // Never below zero: a call the lane forgot as stuck may still answer.
            lane.inFlight = Math.max(0, lane.inFlight - 1);
            calls = drain(lane, System.nanoTime());
        }
        finally {
            lane.lock.unlock();
        }
        for (List<Waiting> call : calls) {
            send(lane, call);
        }
    }

    /** Takes what waits in a lane as the calls to send, counted in flight from now. Holding the lane's lock. */
    private static List<List<Waiting>> drain(Lane lane, long nowNanos) {
        lane.progressNanos = nowNanos;
        if (lane.waiting.isEmpty()) {
            // The common case below two calls in flight: nothing to send, nothing to make.
            return List.of();
        }
        List<List<Waiting>> calls = new ArrayList<>();
        List<Waiting> batch = null;
        Waiting next;
        while ((next = lane.waiting.poll()) != null) {
            if (batch == null || batch.size() == MAX_BATCH || isReset(next.args)) {
                batch = new ArrayList<>();
                calls.add(batch);
            }
            batch.add(next);
            if (isReset(next.args)) {
                batch = null;
            }
        }
        lane.inFlight += calls.size();
        return calls;
    }

    /** Sends the decisions of one call: alone, or as a batch whose reply is shared out. */
    private void send(Lane lane, List<Waiting> call) {
        if (call.size() == 1) {
            Waiting alone = call.get(0);
            sendAlone(alone.keys, alone.args, alone.node).whenComplete((values, failure) -> {
                answered(lane);
                complete(alone, values, failure);
            });
            return;
        }
        int keyCount = 0;
        int argCount = 2 + 2 * call.size();
        boolean[] butDeadline = new boolean[call.size()];
        for (int i = 0; i < call.size(); i++) {
            Waiting waiting = call.get(i);
            butDeadline[i] = i > 0 && sameButDeadline(call.get(i - 1).args, waiting.args);
            keyCount += waiting.keys.length;
            argCount += butDeadline[i] ? 1 : waiting.args.length;
        }
        this.batches.increment();
        this.batchedDecisions.add(call.size());
        byte[][] keys = new byte[keyCount][];
        byte[][] args = new byte[argCount][];
        args[0] = BATCH;
        args[1] = ScriptMessages.bytes(call.size());
        int key = 0;
        int arg = 2 + 2 * call.size();
        for (int i = 0; i < call.size(); i++) {
            Waiting waiting = call.get(i);
            args[2 + 2 * i] = ScriptMessages.bytes(waiting.keys.length);
            System.arraycopy(waiting.keys, 0, keys, key, waiting.keys.length);
            key += waiting.keys.length;
            if (butDeadline[i]) {
                args[3 + 2 * i] = BUT_DEADLINE;
                args[arg++] = waiting.args[DEADLINE];
            }
            else {
                args[3 + 2 * i] = ScriptMessages.bytes(waiting.args.length);
                System.arraycopy(waiting.args, 0, args, arg, waiting.args.length);
                arg += waiting.args.length;
            }
        }
        sendAlone(keys, args, call.get(0).node).whenComplete((values, failure) -> {
            answered(lane);
            for (int i = 0; i < call.size(); i++) {
                Object value = (failure == null && values != null && i < values.size()) ? values.get(i) : null;
                if (failure != null) {
                    call.get(i).reply.completeExceptionally(failure);
                }
                else if (value instanceof List<?> decided && failedAlone(decided)) {
                    call.get(i).reply.completeExceptionally(new RedisCommandExecutionException(
                            new String((byte[]) decided.get(1), StandardCharsets.UTF_8)));
                }
                else if (value instanceof List<?> decided) {
                    // A batch's reply does not show Redis's clock to the reply watch: its decisions do.
                    if (readsRedisTime(call.get(i).args)) {
                        this.replies.notedRedisTime(decided);
                    }
                    complete(call.get(i), decided, null);
                }
                else {
                    call.get(i).reply.completeExceptionally(new RedisCommandExecutionException(
                            "The batch's reply has no decision " + (i + 1) + " of " + call.size() + ": " + values));
                }
            }
        });
    }

    /** Completes a decision that waited with its reply, or its failure. */
    @SuppressWarnings("unchecked")
    private void complete(Waiting waiting, List<?> values, Throwable failure) {
        if (failure != null) {
            waiting.reply.completeExceptionally(failure);
            return;
        }
        waiting.reply.complete((List<Long>) values);
    }

    /** @return the batches sent so far (script calls of more than one decision) and the decisions they carried */
    long[] counts() {
        return new long[] { batchesSent(), batchedDecisions() };
    }

    /** @return the batches sent so far: script calls of more than one decision */
    long batchesSent() {
        return this.batches.sum();
    }

    /** @return the decisions the batches sent so far carried */
    long batchedDecisions() {
        return this.batchedDecisions.sum();
    }

    /**
     * The decisions that a count of script calls stands for: each call one decision, but a batch as
     * many as it carried.
     * @param scriptCalls script calls Redis ran for this runner ({@code INFO commandstats}) since a moment
     * @param before {@link #counts()} at that moment
     * @return the decisions those calls decided
     */
    long decisionsIn(long scriptCalls, long[] before) {
        long[] now = counts();
        return scriptCalls - (now[0] - before[0]) + (now[1] - before[1]);
    }

    /** Whether a decision's arguments are another's but {@code ARGV[3]} (most often the same arrays). */
    private static boolean sameButDeadline(byte[][] previous, byte[][] args) {
        if (previous.length != args.length || args.length <= DEADLINE) {
            return false;
        }
        for (int i = 0; i < args.length; i++) {
            if (i != DEADLINE && previous[i] != args[i] && !Arrays.equals(previous[i], args[i])) {
                return false;
            }
        }
        return true;
    }

    /** Whether a decision's part of a batch's reply is its failure: -2, then Redis's error text. */
    private static boolean failedAlone(List<?> reply) {
        return reply.size() == 2 && reply.get(0) instanceof Long first && first == -2 && reply.get(1) instanceof byte[];
    }

    private static boolean isReset(byte[][] args) {
        return Arrays.equals(args[0], ScriptMessages.RESET);
    }

    /**
     * Whether the script reads Redis's clock ({@code ARGV[2]} empty), so that its reply's time is
     * Redis's own; tests that replay a schedule send a time of theirs.
     */
    static boolean readsRedisTime(byte[][] args) {
        return args.length > 1 && args[1].length == 0;
    }

    /** A connection's or a slot's calls: how many are in flight, and what waits for them. */
    private static final class Lane {

        final ReentrantLock lock = new ReentrantLock();

        final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

        int inFlight;

        /** When a call of the lane was last sent or answered. */
        long progressNanos;

    }

    /** A decision waiting for its lane. */
    private record Waiting(byte[][] keys, byte[][] args, String node, CompletableFuture<List<Long>> reply) {
    }

}
