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
