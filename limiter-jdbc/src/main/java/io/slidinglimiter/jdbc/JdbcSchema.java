package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

/**
 * What the database holds of the limiter's schema, as an application checks it at start.
 * <p>
 * The database must be PostgreSQL {@value #OLDEST_VERSION} or later; the table, its run-time
 * changes' table and its functions (decide, slide, acquire-each) must be there, made by
 * {@link #create} or by a migration from {@value CounterTable#SCHEMA}.
 */
public final class JdbcSchema {

    /** The oldest PostgreSQL release the backend is tested on (Debian 12's). */
    public static final int OLDEST_VERSION = 15;

    /** The databases the backend decides in, as a failure names them. */
    public static final String SUPPORTED = "PostgreSQL " + OLDEST_VERSION + " or later";

    private final DataSource dataSource;

    private final CounterTable table;

    /**
     * @param dataSource the application's data source
     * @param table the counters' table
     */
    public JdbcSchema(DataSource dataSource, CounterTable table) {
        this.dataSource = dataSource;
        this.table = table;
    }

    /**
     * Why the database cannot hold the counters, or null when it can.
     * @return the database's product and version with what the backend needs, or null for PostgreSQL
     * {@value #OLDEST_VERSION} or later
     * @throws SQLException when the database cannot be reached
     */
    public String unsupportedDatabase() throws SQLException {
        try (Connection connection = this.dataSource.getConnection()) {
            DatabaseMetaData metaData = connection.getMetaData();
            String product = metaData.getDatabaseProductName();
            if ("PostgreSQL".equals(product) && metaData.getDatabaseMajorVersion() >= OLDEST_VERSION) {
                return null;
            }
            return product + " " + metaData.getDatabaseProductVersion();
        }
    }

    /**
     * Why the database would refuse the table's name written unquoted, or null when it takes it: a word
     * PostgreSQL reserves ({@code order}, {@code user}, {@code join}) is a syntax error in every statement.
     * @return the database's reason, or null
     * @throws SQLException when the database cannot be reached
     */
    public String rejectedName() throws SQLException {
        String name = this.table.name().substring(this.table.name().lastIndexOf('.') + 1);
        try (Connection connection = this.dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT catdesc FROM pg_get_keywords() WHERE word = ? AND catcode IN ('R', 'T')")) {
            statement.setString(1, name);
            try (ResultSet result = statement.executeQuery()) {
                String reason = result.next() ? "'" + name + "' is a word PostgreSQL reserves (" + result.getString(1)
                        + "), which no statement can name a table by unquoted" : null;
                JdbcConnections.commitIfAsked(connection);
                return reason;
            }
        }
    }

    /**
     * The privileges the database's user lacks to decide, change limits and sweep: on the table,
     * select, insert, update and delete; on its changes' table likewise; execute on its functions.
     * @return what it lacks, as a {@code GRANT} would name it, or null when it lacks nothing
     * @throws SQLException when the database cannot be reached
     */
    public String missingPrivileges() throws SQLException {
        String[] grants = { "SELECT", "INSERT", "UPDATE", "DELETE" };
        StringBuilder query = new StringBuilder("SELECT current_user");
        for (String grant : grants) {
            query.append(", has_table_privilege(?, '").append(grant).append("'), has_table_privilege(?, '")
                    .append(grant).append("')");
        }
        query.append(", has_function_privilege(to_regproc(?)::oid, 'EXECUTE')");
        try (Connection connection = this.dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(query.toString())) {
            int parameter = 1;
            for (int i = 0; i < grants.length; i++) {
                statement.setString(parameter++, this.table.name());
                statement.setString(parameter++, this.table.limitsTable());
            }
            statement.setString(parameter, this.table.name() + "_decide");
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                List<String> missing = new ArrayList<>();
                int column = 2;
                for (String grant : grants) {
                    if (!result.getBoolean(column++)) {
                        missing.add(grant + " ON " + this.table.name());
                    }
                    if (!result.getBoolean(column++)) {
                        missing.add(grant + " ON " + this.table.limitsTable());
                    }
                }
                if (!result.getBoolean(column)) {
                    missing.add("EXECUTE ON FUNCTION " + this.table.name() + "_decide");
                }
                String user = result.getString(1);
                JdbcConnections.commitIfAsked(connection);
                return missing.isEmpty() ? null : "user " + user + " lacks " + String.join("; ", missing);
            }
        }
    }

    /**
     * Whether a failure at start says the database could not be reached, rather than refused what was
     * asked: a connection's failure (SQLSTATE class 08), a server shutting down or starting (57P), a
     * pool that gave no connection in time.
     * @param failure what a check failed with
     * @return whether the database was out of reach
     */
    public static boolean isUnreachable(SQLException failure) {
        String state = JdbcBackendException.sqlStateOf(failure);
        return failure instanceof SQLTransientConnectionException
                || (state != null && JdbcBackendException.isOutOfReach(state));
    }

    /**
     * Whether the table, its changes' table and its functions (decide, slide, acquire-each) are there:
     * a table made by an older DDL lacks the newer functions, and needs the DDL run again.
     * @return whether all five are
     * @throws SQLException when the database cannot be reached
     */
    public boolean isPresent() throws SQLException {
        try (Connection connection = this.dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL"
                        + " AND to_regclass(?) IS NOT NULL AND to_regproc(?) IS NOT NULL AND to_regproc(?) IS NOT NULL"
                        + " AND to_regproc(?) IS NOT NULL")) {
            statement.setString(1, this.table.name());
            statement.setString(2, this.table.limitsTable());
            statement.setString(3, this.table.name() + "_decide");
            statement.setString(4, this.table.name() + "_slide");
            statement.setString(5, this.table.name() + "_acquire_each");
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                boolean present = result.getBoolean(1);
                JdbcConnections.commitIfAsked(connection);
                return present;
            }
        }
    }

    /**
     * Creates what is missing: the DDL of {@value CounterTable#SCHEMA} for this table, which changes
     * nothing that is there but the function, made anew.
     * @throws SQLException when the database refuses it
     */
    public void create() throws SQLException {
        try (Connection connection = this.dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(this.table.schema());
            JdbcConnections.commitIfAsked(connection);
        }
    }

}
