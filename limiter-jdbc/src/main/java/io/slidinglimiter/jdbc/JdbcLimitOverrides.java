package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

import io.slidinglimiter.core.SharedLimitChanges;

/**
 * Limits changed at run time, kept in the database so that every instance applies them: one row per
 * limit in {@code <table>_limits}, its value {@code "<limit>:<configured limit>"}.
 * <p>
 * The configured limit is the one the instance that made the change was started with: an instance
 * applies a stored change only while its own configuration says the same, so a change outlives
 * restarts and rolling deploys of the same configuration, and a new configured value wins. Every
 * statement waits at most the backend's timeout.
 */
public final class JdbcLimitOverrides implements SharedLimitChanges {

    private final JdbcConnections connections;

    private final String store;

    private final String remove;

    private final String removeIfUnchanged;

    private final String load;

    /**
     * Creates the store, in the database of a backend, waiting as its decisions do.
     * @param backend the backend, whose table's {@code _limits} table this is
     */
    public JdbcLimitOverrides(JdbcBackend backend) {
        this.connections = backend.connections();
        String limits = backend.table().limitsTable();
        this.store = "INSERT INTO " + limits + " (limit_name, stored) VALUES (?, ?)"
                + " ON CONFLICT (limit_name) DO UPDATE SET stored = EXCLUDED.stored";
        this.remove = "DELETE FROM " + limits + " WHERE limit_name = ?";
        this.removeIfUnchanged = "DELETE FROM " + limits + " WHERE limit_name = ? AND stored = ?";
        this.load = "SELECT limit_name, stored FROM " + limits;
    }

    @Override
    public String serverName() {
        return "PostgreSQL";
    }

    /**
     * {@inheritDoc}
     * @throws JdbcBackendException when the database fails or does not answer in time
     */
    @Override
    public void store(String limitName, long limit, long configuredLimit) {
        update(this.store, limitName, Stored.format(limit, configuredLimit));
    }

    /**
     * {@inheritDoc}
     * @throws JdbcBackendException when the database fails or does not answer in time
     */
    @Override
    public void remove(String limitName) {
        update(this.remove, limitName);
    }

    /**
     * {@inheritDoc}
     * @throws JdbcBackendException when the database fails or does not answer in time
     */
    @Override
    public void removeStale(String limitName, Stored read) {
        update(this.removeIfUnchanged, limitName, read.stored());
    }

    /**
     * {@inheritDoc}
     * @throws JdbcBackendException when the database fails or does not answer in time
     */
    @Override
    public Map<String, Stored> load() {
        try (Connection connection = this.connections.open();
                PreparedStatement statement = connection.prepareStatement(this.load)) {
            return this.connections.run(connection, statement, () -> {
                try (ResultSet rows = statement.executeQuery()) {
                    Map<String, Stored> overrides = new HashMap<>();
                    while (rows.next()) {
                        overrides.put(rows.getString(1), Stored.parse(rows.getString(2)));
                    }
                    return overrides;
                }
            });
        }
        catch (SQLException ex) {
            throw new JdbcBackendException("PostgreSQL could not read the run-time limit changes (SQLSTATE "
                    + ex.getSQLState() + "): " + ex.getMessage(), ex);
        }
    }

    private void update(String sql, String... parameters) {
        try (Connection connection = this.connections.open(); PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setString(i + 1, parameters[i]);
            }
            this.connections.run(connection, statement, statement::executeUpdate);
        }
        catch (SQLException ex) {
            throw new JdbcBackendException("PostgreSQL could not change the run-time limit changes (SQLSTATE "
                    + ex.getSQLState() + "): " + ex.getMessage(), ex);
        }
    }

}
