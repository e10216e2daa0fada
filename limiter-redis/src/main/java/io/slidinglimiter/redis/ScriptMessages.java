package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.failover.LeaseGrant;

/**
 * What the limiter's script is sent, what it answers.
 * <p>
 * What the limiter's script ({@link RedisScripts#DECIDE}) is sent and what it answers: its
 * {@code ARGV} are the operation, the time (empty: Redis's own), the time of the acquisition an
 * operation refers to (or the caller's deadline), then five per limit (algorithm, window,
 * sub-windows, limit, cost); a lease adds the permits wanted, a give-back the counter's creation
 * time; a refund or a settle adds the generation of the decision it undoes. Its reply is whether all
 * were admitted, the Redis time, then four per limit (admitted, remaining, retry after, reset
 * after), then for the operations that need them the decision's generation, the count, the
 * lease's size, its sub-window's end and the counter's generation.
 */
final class ScriptMessages {

    /** The largest limit Redis counts exactly: its Lua numbers are doubles. */
    static final long MAX_LIMIT = (1L << 53) - 1;

    static final byte[] ACQUIRE = bytes("acquire");

    static final byte[] PEEK = bytes("peek");

    static final byte[] RESET = bytes("reset");

    static final byte[] REFUND = bytes("refund");

    static final byte[] SETTLE = bytes("settle");

    static final byte[] LEASE = bytes("lease");

    static final byte[] GIVE_BACK = bytes("give-back");

    /** An empty time: the script reads Redis's clock. */
    static final byte[] REDIS_TIME = new byte[0];

    static final byte[] ZERO = bytes("0");

    private static final byte[] ONE = bytes("1");

    /** Slots of the table of encoded definitions: a power of two. */
    private static final int DEFINITION_SLOTS = 64;

    private static final AtomicReferenceArray<EncodedDefinition> DEFINITIONS = new AtomicReferenceArray<>(
            DEFINITION_SLOTS);

    private ScriptMessages() {
    }

    /**
     * The arguments of one operation over limits whose keys share a slot.
     * @param operation what the script does
     * @param time the time to act at, or {@link #REDIS_TIME}
     * @param acquiredAt when the acquisition an operation refers to was decided, or the caller's
     * deadline for an acquisition
     * @param limits the limits
     * @param costs their permits
     * @return the script's {@code ARGV}
     */
    static byte[][] arguments(byte[] operation, byte[] time, byte[] acquiredAt, List<LimitDefinition> limits,
            long[] costs) {
        byte[][] args = new byte[3 + 5 * limits.size()][];
        args[0] = operation;
        args[1] = time;
        args[2] = acquiredAt;
        for (int i = 0; i < limits.size(); i++) {
            putLimit(args, i, limits.get(i), costs[i]);
        }
        return args;
    }

    /** The arguments of an acquisition of requests that share a slot. */
    static byte[][] acquire(byte[] time, byte[] deadline, List<LimitRequest> requests) {
        byte[][] args = new byte[3 + 5 * requests.size()][];
        args[0] = ACQUIRE;
        args[1] = time;
        args[2] = deadline;
        for (int i = 0; i < requests.size(); i++) {
            putLimit(args, i, requests.get(i).limit(), requests.get(i).cost());
        }
        return args;
    }

    /** The five arguments of the {@code i}-th limit: its definition's, encoded once, then the cost. */
    private static void putLimit(byte[][] args, int i, LimitDefinition limit, long cost) {
        checkLimit(limit);
        int base = 3 + 5 * i;
        System.arraycopy(definitionArguments(limit), 0, args, base, 4);
        args[base + 4] = (cost == 1) ? ONE : bytes(cost);
    }

    /**
     * A limit's algorithm, window, sub-windows and permits as the script reads them, encoded once per
     * definition: a few are in force at a time, each one instance, found by identity in a small table
     * (a definition whose slot another took is encoded again, which costs only that).
     */
    private static byte[][] definitionArguments(LimitDefinition limit) {
        int slot = System.identityHashCode(limit) & (DEFINITION_SLOTS - 1);
        EncodedDefinition encoded = DEFINITIONS.get(slot);
        if (encoded == null || encoded.limit() != limit) {
            encoded = new EncodedDefinition(limit, new byte[][] { (limit.algorithm() == Algorithm.SLIDING_LOG) ? ONE
                    : ZERO, bytes(limit.windowMillis()), bytes(limit.subWindows()), bytes(limit.limit()) });
            DEFINITIONS.set(slot, encoded);
        }
        return encoded.arguments();
    }

    /** A definition and its encoded arguments; the arguments are never changed. */
    private record EncodedDefinition(LimitDefinition limit, byte[][] arguments) {
    }

    /** The arguments of a lease: the call's cost and the permits wanted, cost included. */
    static byte[][] lease(byte[] time, byte[] deadline, LimitDefinition limit, long cost, long wanted) {
        byte[][] args = Arrays.copyOf(arguments(LEASE, time, deadline, List.of(limit), new long[] { cost }), 9);
        args[8] = bytes(Math.max(wanted, cost));
        return args;
    }

    /** The arguments of a give-back of a lease's unused permits, to the counter it was taken from. */
    static byte[][] giveBack(byte[] time, LimitDefinition limit, long decidedAtMillis, long unused,
            long createdAtMillis) {
        byte[][] args = Arrays.copyOf(arguments(GIVE_BACK, time, bytes(decidedAtMillis),
                List.of(limit), new long[] { unused }), 9);
        args[8] = bytes(createdAtMillis);
        return args;
    }

    /** A give-back of a whole lease that Redis took after its caller stopped waiting, from its reply. */
    static byte[][] giveBackLate(byte[] time, LimitDefinition limit, List<Long> late) {
        return giveBack(time, limit, late.get(1), late.get(6), late.get(8));
    }

    /** Whether a late lease's reply took permits, which must then be given back. */
    static boolean tookPermits(List<Long> late) {
        return late.get(0) == 1 && late.get(6) > 0;
    }

    /** Whether Redis ran the call after the caller's deadline, changing nothing. */
    static boolean ranLate(List<Long> reply) {
        return reply.get(0) < 0;
    }

    /** The decisions of an acquisition's reply. */
    static Decisions decisions(List<Long> reply, List<LimitRequest> requests) {
        List<Decision> decisions = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            decisions.add(decision(reply, i, requests.get(i).limit().limit()));
        }
        return new Decisions(reply.get(0) == 1, List.copyOf(decisions), reply.get(1),
                generation(reply, requests.size()));
    }

    /** The generation an acquisition's reply ends with, after its limits' decisions; 0 when it has none. */
    static long generation(List<Long> reply, int limits) {
        int index = 2 + 4 * limits;
        return (reply.size() > index) ? reply.get(index) : 0;
    }

    /**
     * The arguments of a refund or a settle: those of {@link #arguments}, then the generation of the
     * decision it undoes, so that a counter made since (a reset) gives nothing back.
     */
    static byte[][] undo(byte[] operation, byte[] time, long acquiredAtMillis, long generation,
            List<LimitDefinition> limits, long[] costs) {
        byte[][] args = arguments(operation, time, bytes(acquiredAtMillis), limits, costs);
        byte[][] withGeneration = Arrays.copyOf(args, args.length + 1);
        withGeneration[args.length] = bytes(generation);
        return withGeneration;
    }

    /** The decision of one limit in a reply. */
    static Decision decision(List<Long> reply, int index, long limit) {
        int base = 2 + 4 * index;
        return new Decision(reply.get(base) == 1, limit, reply.get(base + 1), reply.get(base + 2), reply.get(base + 3));
    }

    /** The count a peek's reply carries after its decision. */
    static long used(List<Long> reply) {
        return reply.get(2 + 4);
    }

    /** The lease of a lease's reply. */
    static LeaseGrant grant(List<Long> reply, LimitDefinition limit) {
        return new LeaseGrant(decision(reply, 0, limit.limit()), reply.get(6), reply.get(1), reply.get(7),
                reply.get(8));
    }

    /** Refuses a limit that Redis's Lua, which counts in doubles, cannot count exactly. */
    static void checkLimit(LimitDefinition limit) {
        if (limit.limit() > MAX_LIMIT) {
            throw new IllegalArgumentException("Limit '" + limit.name() + "' is " + limit.limit()
                    + " permits, but Redis counts exactly only up to " + MAX_LIMIT + " (2^53 - 1)");
        }
    }

    static List<LimitDefinition> limitsOf(List<LimitRequest> requests) {
        return requests.stream().map(LimitRequest::limit).toList();
    }

    static long[] costsOf(List<LimitRequest> requests) {
        return requests.stream().mapToLong(LimitRequest::cost).toArray();
    }

    /** A number as the script reads it, in ASCII digits, written straight into its bytes. */
    static byte[] bytes(long value) {
        if (value < 0) {
            return bytes(Long.toString(value));
        }
        int digits = 1;
        for (long rest = value / 10; rest != 0; rest /= 10) {
            digits++;
        }
        byte[] ascii = new byte[digits];
        long rest = value;
        for (int i = digits - 1; i >= 0; i--) {
            ascii[i] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
        return ascii;
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

}
