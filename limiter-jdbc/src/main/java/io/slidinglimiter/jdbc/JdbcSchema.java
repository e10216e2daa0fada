package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

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
