/**
 * The database backend: counters in a table of the application's PostgreSQL database, each decision
 * one statement (the {@code <table>_decide} function of {@code schema-postgresql.sql}), shared by
 * every instance; {@link io.slidinglimiter.failover.ResilientBackend} keeps its failures from callers.
 */
@NullMarked
package io.slidinglimiter.jdbc;

import org.jspecify.annotations.NullMarked;
