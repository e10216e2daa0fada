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
        // counted at once (its first permits always fit) and whose existing row goes through the step
        // function. Parameters: name, key, sub-windows, window, limit, cost, fixed time, deadline, lock
        // wait; then window, sub-windows, window, limit, cost for the update, and window for the reply.
        this.acquireOne = "INSERT INTO " + name + " AS t (limit_name, counter_key, geometry, newest, total, counts,"
                + " times, generation, expires_at, decision)"
                + " SELECT a.name, a.key, a.n || ':' || a.slot_ms, a.slot, a.cost,"
                + " array_fill(0::bigint, ARRAY[(a.slot % a.n)::int]) || a.cost"
                + " || array_fill(0::bigint, ARRAY[(a.n - 1 - a.slot % a.n)::int]),"
                + " NULL::bigint[], a.gen, a.now_ms + a.window_ms + 1000,"
                + " ARRAY[1, a.lim - a.cost, 0, least((a.slot + a.n) * a.slot_ms - a.now_ms, a.window_ms)]"
                + " FROM (SELECT b.*, b.window_ms / b.n AS slot_ms, b.now_ms / (b.window_ms / b.n) AS slot FROM"
                + " (SELECT ?::text AS name, ?::text AS key, ?::int AS n, ?::bigint AS window_ms, ?::bigint AS lim,"
                + " ?::bigint AS cost, coalesce(?::bigint, floor(extract(epoch FROM c) * 1000)::bigint) AS now_ms,"
                + " floor(extract(epoch FROM c) * 1000000)::bigint AS gen, ?::bigint AS deadline,"
                + " set_config('lock_timeout', ?, true) AS lock_wait FROM clock_timestamp() AS c) AS b) AS a"
                + " WHERE a.deadline IS NULL OR a.now_ms <= a.deadline"
                + " ON CONFLICT (limit_name, counter_key) DO UPDATE SET (geometry, newest, total, counts, times,"
                + " generation, expires_at, decision) = (SELECT s.s_geometry, s.s_newest, s.s_total, s.s_counts, NULL::bigint[],"
                + " s.s_generation, s.s_expires_at, s.s_decision FROM " + name + "_step(t.geometry, t.newest, t.total,"
                + " t.counts, t.generation, t.expires_at, EXCLUDED.expires_at - ?::bigint - 1000, EXCLUDED.generation,"
                + " ?::int, ?::bigint, ?::bigint, ?::bigint, 1) AS s)"
                + " RETURNING decision[1], decision[2], decision[3], decision[4], generation, expires_at - ?::bigint - 1000";
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

    /** @return the upsert that acquires one sliding-window-counter limit, with its fifteen parameters */
    String acquireOne() {
        return this.acquireOne;
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
