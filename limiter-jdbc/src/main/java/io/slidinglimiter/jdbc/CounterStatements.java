package io.slidinglimiter.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.internal.CounterKeys;

/**
 * The counters' two statements as JDBC sends them: their parameters, their replies.
 * <p>
 * {@link CounterTable#acquireOne()}, the upsert of one sliding-window-counter limit (and
 * {@link CounterTable#acquireMany()}, of several waiting callers' limits at once), and
 * {@link CounterTable#decide()}, the function that does everything else. Each runs watched, through
 * {@link JdbcConnections#run}.
 */
final class CounterStatements {

    private CounterStatements() {
    }

    /**
     * Acquires one sliding-window-counter limit by the upsert.
     * @param connections how statements wait
     * @param connection a connection of {@code connections}
     * @param table the counters' table
     * @param request the limit, key and cost
     * @param fixedNow the time to decide at, or null for the database's
     * @param deadline the database time after which the upsert changes nothing, or null
     * @return the decision, or null when the database ran it after the deadline
     * @throws SQLException as the driver threw it
     */
    static Decisions acquireOne(JdbcConnections connections, Connection connection, CounterTable table,
            LimitRequest request, Long fixedNow, Long deadline) throws SQLException {
        LimitDefinition limit = request.limit();
        try (PreparedStatement statement = connection.prepareStatement(table.acquireOne())) {
            setRow(statement, limit, request.key());
            statement.setLong(6, request.cost());
            setLong(statement, 7, fixedNow);
            setLong(statement, 8, deadline);
            statement.setString(9, connections.lockWait());
            statement.setLong(10, limit.windowMillis());
            statement.setLong(11, limit.windowMillis());
            return connections.run(connection, statement, () -> {
                try (ResultSet result = statement.executeQuery()) {
                    return result.next() ? decisionsOf(result, limit) : null;
                }
            });
        }
    }

    /**
     * Acquires several sliding-window-counter limits of distinct keys by one upsert, each its own
     * decision.
     * @param connections how statements wait
     * @param connection a connection of {@code connections}
     * @param table the counters' table
     * @param requests the limits, keys and costs: no limit and key twice
     * @param fixedNow each one's time to decide at, or nulls for the database's
     * @param deadlines each one's database time after which the upsert changes nothing for it, or nulls
     * @return each one's decision, or null where the database ran it after its deadline
     * @throws SQLException as the driver threw it
     */
    static Decisions[] acquireMany(JdbcConnections connections, Connection connection, CounterTable table,
            List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines) throws SQLException {
        int size = requests.size();
        Limits limits = Limits.of(requests);
        try (PreparedStatement statement = connection.prepareStatement(table.acquireMany())) {
            statement.setString(1, connections.lockWait());
            statement.setObject(2, limits.names);
            statement.setObject(3, limits.keys);
            statement.setObject(4, limits.subWindows);
            statement.setObject(5, limits.windows);
            statement.setObject(6, limits.limits);
            statement.setObject(7, costsOf(requests));
            statement.setArray(8, connection.createArrayOf("int8", fixedNow));
            statement.setArray(9, connection.createArrayOf("int8", deadlines));
            return connections.run(connection, statement, () -> {
                Decisions[] decided = new Decisions[size];
                try (ResultSet result = statement.executeQuery()) {
                    while (result.next()) {
                        int i = indexOf(requests, limits.keys, result.getString(7), result.getString(8));
                        decided[i] = decisionsOf(result, requests.get(i).limit());
                    }
                }
                return decided;
            });
        }
    }

    /**
     * Acquires one sliding-window-counter limit of one key for several calls in turn, each its own
     * decision, by one call of the acquire-each function.
     * @param connections how statements wait
     * @param connection a connection of {@code connections}
     * @param table the counters' table
     * @param requests the calls: one limit, one key, their costs
     * @param fixedNow the time to decide at, or null for the database's
     * @param deadlines each call's database time after which it changes nothing, or nulls
     * @return each call's decision, or null where the database ran it after its deadline
     * @throws SQLException as the driver threw it
     */
    static Decisions[] acquireEach(JdbcConnections connections, Connection connection, CounterTable table,
            List<LimitRequest> requests, Long fixedNow, Long[] deadlines) throws SQLException {
        LimitRequest first = requests.get(0);
        LimitDefinition limit = first.limit();
        try (PreparedStatement statement = connection.prepareStatement(table.acquireEach())) {
            setRow(statement, limit, first.key());
            statement.setObject(6, costsOf(requests));
            setLong(statement, 7, fixedNow);
            statement.setArray(8, connection.createArrayOf("int8", deadlines));
            statement.setString(9, connections.lockWait());
            long[] reply = connections.run(connection, statement, () -> {
                try (ResultSet result = statement.executeQuery()) {
                    result.next();
                    return values(result.getArray(1));
                }
            });
            Decisions[] decided = new Decisions[requests.size()];
            for (int i = 0; i < decided.length; i++) {
                if (reply[2 + 4 * i] != -1) {
                    Decision decision = decisionAt(reply, i, limit);
                    decided[i] = new Decisions(decision.allowed(), List.of(decision), reply[0], reply[1]);
                }
            }
            return decided;
        }
    }

    /**
     * Where a limit and key are among requests that hold each pair once, by the keys as the statement
     * sent them ({@link CounterKeys#inText}).
     */
    private static int indexOf(List<LimitRequest> requests, String[] keysSent, String name, String key) {
        for (int i = 0; i < requests.size(); i++) {
            if (keysSent[i].equals(key) && requests.get(i).limit().name().equals(name)) {
                return i;
            }
        }
        throw new IllegalStateException("PostgreSQL decided limit '" + name + "', key '" + key
                + "', which no decision of the statement asked for");
    }

    /** One limit's decision from an upsert's reply row. */
    private static Decisions decisionsOf(ResultSet result, LimitDefinition limit) throws SQLException {
        boolean allowed = result.getLong(1) == 1;
        Decision decision = new Decision(allowed, limit.limit(), result.getLong(2), result.getLong(3),
                result.getLong(4));
        long decidedAt = result.getLong(6) - limit.windowMillis() - 1000;
        return new Decisions(allowed, List.of(decision), decidedAt, result.getLong(5));
    }

    /**
     * Runs the decide function once.
     * @param connections how statements wait
     * @param connection a connection of {@code connections}
     * @param table the counters' table
     * @param operation what it does
     * @param fixedNow the time to decide at, or null for the database's
     * @param atMillis its third argument: an acquisition's deadline, an undo's decision time
     * @param decidedIn the generation of the decision undone
     * @param requests the limits and keys
     * @param costs each request's cost, or what an undo changes
     * @return its reply
     * @throws SQLException as the driver threw it
     */
    static long[] decide(JdbcConnections connections, Connection connection, CounterTable table, String operation,
            Long fixedNow, Long atMillis, long decidedIn, List<LimitRequest> requests, long[] costs)
            throws SQLException {
        Limits limits = Limits.of(requests);
        try (PreparedStatement statement = connection.prepareStatement(table.decide())) {
            statement.setString(1, operation);
            setLong(statement, 2, fixedNow);
            setLong(statement, 3, atMillis);
            statement.setLong(4, decidedIn);
            statement.setLong(5, connections.lockWaitMillis());
            statement.setObject(6, limits.names);
            statement.setObject(7, limits.keys);
            statement.setObject(8, limits.algorithms);
            statement.setObject(9, limits.windows);
            statement.setObject(10, limits.subWindows);
            statement.setObject(11, limits.limits);
            statement.setObject(12, costs);
            return connections.run(connection, statement, () -> {
                try (ResultSet result = statement.executeQuery()) {
                    result.next();
                    return values(result.getArray(1));
                }
            });
        }
    }

    /** The decisions of the decide function's reply: allowed, the time decided at, then four numbers per limit. */
    static Decisions decisions(long[] reply, List<LimitRequest> requests, long generation) {
        List<Decision> decisions = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            decisions.add(decisionAt(reply, i, requests.get(i).limit()));
        }
        return new Decisions(reply[0] == 1, List.copyOf(decisions), reply[1], generation);
    }

    /**
     * Sets the first five parameters of a statement of one key's row, the upsert's and the acquire-each
     * function's alike: the limit's name, the key, the sub-windows, the window and the limit.
     */
    private static void setRow(PreparedStatement statement, LimitDefinition limit, String key) throws SQLException {
        statement.setString(1, limit.name());
        statement.setString(2, CounterKeys.inText(key));
        statement.setInt(3, limit.subWindows());
        statement.setLong(4, limit.windowMillis());
        statement.setLong(5, limit.limit());
    }

    /**
     * One limit's decision in a function's reply, whose first two numbers are not a decision's: the
     * four numbers from {@code 2 + 4 * index} (allowed, remaining, retry-after, reset-after).
     */
    private static Decision decisionAt(long[] reply, int index, LimitDefinition limit) {
        int base = 2 + 4 * index;
        return new Decision(reply[base] == 1, limit.limit(), reply[base + 1], reply[base + 2], reply[base + 3]);
    }

    /** @return each request's cost, as the decide function's costs parameter takes them */
    static long[] costsOf(List<LimitRequest> requests) {
        long[] costs = new long[requests.size()];
        for (int i = 0; i < costs.length; i++) {
            costs[i] = requests.get(i).cost();
        }
        return costs;
    }

    /** Sets a nullable bigint parameter. */
    static void setLong(PreparedStatement statement, int index, Long value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.BIGINT);
        }
        else {
            statement.setLong(index, value);
        }
    }

    private static long[] values(Array array) throws SQLException {
        Object values = array.getArray();
        if (values instanceof Long[] boxed) {
            long[] reply = new long[boxed.length];
            for (int i = 0; i < boxed.length; i++) {
                reply[i] = boxed[i];
            }
            return reply;
        }
        return (long[]) values;
    }

    /** The requests' limits and keys as the statements' array parameters take them, one column each. */
    private record Limits(String[] names, String[] keys, int[] algorithms, long[] windows, int[] subWindows,
            long[] limits) {

        static Limits of(List<LimitRequest> requests) {
            int size = requests.size();
            Limits columns = new Limits(new String[size], new String[size], new int[size], new long[size],
                    new int[size], new long[size]);
            for (int i = 0; i < size; i++) {
                LimitRequest request = requests.get(i);
                LimitDefinition limit = request.limit();
                columns.names[i] = limit.name();
                columns.keys[i] = CounterKeys.inText(request.key());
                columns.algorithms[i] = (limit.algorithm() == Algorithm.SLIDING_LOG) ? 1 : 0;
                columns.windows[i] = limit.windowMillis();
                columns.subWindows[i] = limit.subWindows();
                columns.limits[i] = limit.limit();
            }
            return columns;
        }

    }

}
