package io.slidinglimiter.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * The table the counters live in, with the SQL that reaches it.
 * <p>
 * Its DDL ships as {@value #SCHEMA} and names the table {@value #DEFAULT_NAME}; another name
 * ({@code limiter.jdbc.table}) gives the same DDL with that name, its run-time changes' table
 * {@code <name>_limits} and its function {@code <name>_decide}.
 */
public final class CounterTable {

    /** The table's name unless configured otherwise. */
    public static final String DEFAULT_NAME = "limiter_counters";

    /** Where the DDL is, on the class path: for Flyway or Liquibase migrations. */
    public static final String SCHEMA = "classpath:io/slidinglimiter/jdbc/schema-postgresql.sql";

    /** Unquoted PostgreSQL identifiers, optionally schema-qualified; short enough for the derived names. */
    private static final Pattern NAME = Pattern.compile("([a-z_][a-z0-9_]{0,40}\\.)?[a-z_][a-z0-9_]{0,40}");

    private final String name;

    private final String decide;

    private final String acquireMany;

    private final String acquireEach;

    private final String deleteExpired;

    private final String acquireOne;

    /**
     * @param name the table's name, as SQL writes it unquoted: lower-case letters, digits and
     * underscores, optionally after a schema and a dot
     * @throws IllegalArgumentException for another name
     */
    public CounterTable(String name) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("'" + name + "' is not a table name the limiter can use: lower-case"
                    + " letters, digits and underscores, at most 41, optionally after a schema name and a dot");
        }
        this.name = name;
        this.decide = "SELECT " + name + "_decide(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        // One sliding-window-counter limit acquired, the common decision: one upsert, whose new row is
        // counted at once (its first permits always fit) and whose existing row goes through the slide
        // function. The parameters and the clock are one subquery, OFFSET 0 keeping the clock read once;
        // each executor node costs every statement. Parameters: name, key, sub-windows, window, limit,
        // cost, fixed time, deadline, lock wait; then window twice for the update.
        this.acquireOne = upsert(name, "SELECT ?::text AS name, ?::text AS key, ?::int AS n, ?::bigint AS window_ms,"
                + " ?::bigint AS lim, ?::bigint AS cost, ?::bigint AS fixed,"
                + " floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS gen, ?::bigint AS deadline,"
                + " set_config('lock_timeout', ?, true) AS lock_wait OFFSET 0", "?::bigint");
        // Several such limits, each its own decision, of distinct keys: one row each, from arrays of the
        // same parameters (fixed times and deadlines may hold nulls), then the lock wait. The rows are
        // locked in the order the decide function locks a call's rows, so that two statements never
        // wait for each other. A row's window is its sub-windows times its slot's length (a window is
        // whole slots).
        this.acquireMany = upsert(name, "SELECT x.name, x.key, x.n, x.window_ms, x.lim, x.cost, x.fixed, c.gen,"
                + " x.deadline, c.lock_wait FROM (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
                + " AS gen, set_config('lock_timeout', ?, true) AS lock_wait OFFSET 0) AS c,"
                + " unnest(?::text[], ?::text[], ?::int[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],"
                + " ?::bigint[]) AS x(name, key, n, window_ms, lim, cost, fixed, deadline) ORDER BY x.name, x.key",
                "(cardinality(EXCLUDED.counts) * split_part(EXCLUDED.geometry, ':', 2)::bigint)");
        this.acquireEach = "SELECT " + name + "_acquire_each(?, ?, ?, ?, ?, ?, ?, ?, ?)";
        this.deleteExpired = "DELETE FROM " + name + " WHERE ctid = ANY (ARRAY(SELECT ctid FROM " + name
                + " WHERE expires_at < coalesce(?, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)"
                + " LIMIT ? FOR UPDATE SKIP LOCKED))";
    }

    /** @return the table's name */
    public String name() {
        return this.name;
    }

    /** @return the name of the table of run-time limit changes */
    public String limitsTable() {
        return this.name + "_limits";
    }

    /** @return the upsert that acquires one sliding-window-counter limit, with its eleven parameters */
    String acquireOne() {
        return this.acquireOne;
    }

    /**
     * @return the upsert that acquires several sliding-window-counter limits of distinct keys, each its
     * own decision, with its nine parameters: the lock wait, then eight arrays
     */
    String acquireMany() {
        return this.acquireMany;
    }

    /**
     * @return the call of the function that acquires one sliding-window-counter limit of one key for
     * several calls in turn, with its nine parameters: name, key, sub-windows, window, limit, the
     * calls' costs, the fixed time, the calls' deadlines, the lock wait
     */
    String acquireEach() {
        return this.acquireEach;
    }

    /**
     * An upsert of counter rows: a new row is counted at once (its first permits always fit), an
     * existing one goes through the slide function with the geometry the new row has. The update
     * reads the call from the row the insert would have made: its sub-windows (the counts' length),
     * its cost (total) and its limit (remaining plus cost); OFFSET 0 keeps the planner from calling
     * the function once per column. Its reply, a row per decision made: the decision's four numbers,
     * the row's generation, expires_at (the time decided at plus the window and a second), its limit
     * and its key.
     * @param name the table's name
     * @param source the rows: name, key, n (sub-windows), window_ms, lim, cost, fixed (a test's time,
     * or null), gen (the clock's microseconds: the row's generation), deadline (or null)
     * @param window the row's window in the update, where only the new row is in reach
     */
    private static String upsert(String name, String source, String window) {
        // The time is the clock's microseconds over a thousand, or a test's fixed time.
        String now = "coalesce(a.fixed, a.gen / 1000)";
        String slotMillis = "(a.window_ms / a.n)";
        String slot = "(" + now + " / " + slotMillis + ")";
        return "INSERT INTO " + name + " AS t (limit_name, counter_key, geometry, newest, total, counts,"
                + " times, generation, expires_at, decision)"
                + " SELECT a.name, a.key, a.n || ':' || " + slotMillis + ", " + slot + ", a.cost,"
                + " array_fill(0::bigint, ARRAY[(" + slot + " % a.n)::int]) || a.cost"
                + " || array_fill(0::bigint, ARRAY[(a.n - 1 - " + slot + " % a.n)::int]),"
                + " NULL::bigint[], a.gen, " + now + " + a.window_ms + 1000,"
                + " ARRAY[1, a.lim - a.cost, 0, least((" + slot + " + a.n) * " + slotMillis + " - " + now
                + ", a.window_ms)]"
                + " FROM (" + source + ") AS a"
                + " WHERE a.deadline IS NULL OR " + now + " <= a.deadline"
                + " ON CONFLICT (limit_name, counter_key) DO UPDATE SET (geometry, newest, total, counts, times,"
                + " generation, expires_at, decision) = (SELECT EXCLUDED.geometry, s.r[1], s.r[2], s.r[11:],"
                + " NULL::bigint[], s.r[3], s.r[4], s.r[5:8] FROM (SELECT " + name + "_slide(t.geometry,"
                + " EXCLUDED.geometry, t.newest, t.total, t.counts, t.generation, t.expires_at,"
                + " EXCLUDED.expires_at - " + window + " - 1000, EXCLUDED.generation, cardinality(EXCLUDED.counts), "
                + window + ", EXCLUDED.decision[2] + EXCLUDED.total, EXCLUDED.total, 1) AS r OFFSET 0) AS s)"
                + " RETURNING decision[1], decision[2], decision[3], decision[4], generation, expires_at, limit_name,"
                + " counter_key";
    }

    /** @return the call of the decide function, with its twelve parameters */
    String decide() {
        return this.decide;
    }

    /** @return deletes up to a number of rows idle past a time, skipping rows a decision holds */
    String deleteExpired() {
        return this.deleteExpired;
    }

    /**
     * The DDL for this table: {@value #SCHEMA} with this table's name.
     * @return statements that create the tables and the function, idempotent
     */
    public String schema() {
        try (InputStream in = CounterTable.class.getResourceAsStream("schema-postgresql.sql")) {
            if (in == null) {
                throw new IllegalStateException("Missing " + SCHEMA);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace(DEFAULT_NAME, this.name);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public String toString() {
        return this.name;
    }

}
