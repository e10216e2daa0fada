package io.slidinglimiter.autoconfigure;

import java.sql.SQLException;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.jdbc.CounterTable;
import io.slidinglimiter.jdbc.JdbcSchema;

/**
 * Checks at start that the database can hold the counters, creating the table when told to.
 * <p>
 * A database other than PostgreSQL 15 or later fails the start, naming the ones supported; a missing
 * table fails it with the DDL's location and both ways to create it; so do a table name the database
 * reserves, a user without the privileges every decision needs, and a DDL the database refuses under
 * {@code initialize-schema: always}, each naming the property and the fix. Only a database that cannot
 * be reached at start is said once: the application starts, and decisions follow the failure policy
 * until it answers (the table is checked by the first of them).
 */
final class JdbcSchemaSetup {

    /** The database auto-configuration's logger, which docs/operations.md lists for this line. */
    private static final Log logger = LogFactory.getLog(LimiterJdbcAutoConfiguration.class);

    private JdbcSchemaSetup() {
    }

    /**
     * Checks the database, creating the table first under {@code initialize-schema: always}.
     * @param dataSource the application's data source
     * @param table the counters' table
     * @param initialization {@code limiter.jdbc.initialize-schema}
     * @param properties the limiter's properties, for the property a failure names
     * @throws InvalidLimiterConfigurationException for another database, a missing table, a reserved name,
     * missing privileges, or any other error the database answered
     */
    static void prepare(DataSource dataSource, CounterTable table, LimiterProperties.SchemaInitialization initialization,
            LimiterProperties properties) {
        JdbcSchema schema = new JdbcSchema(dataSource, table);
        try {
            String unsupported = schema.unsupportedDatabase();
            if (unsupported != null) {
                throw new InvalidLimiterConfigurationException(ConfiguredLimits.propertyNaming(properties, Backends.JDBC),
                        "is jdbc, but the application's database is " + unsupported + ": the database backend"
                                + " decides in " + JdbcSchema.SUPPORTED, "Point spring.datasource.url at a"
                                        + " PostgreSQL database, or use limiter.backend=redis or local.");
            }
            String rejected = schema.rejectedName();
            if (rejected != null) {
                throw new InvalidLimiterConfigurationException("limiter.jdbc.table", "is " + table.name() + ", but "
                        + rejected, "Name the table otherwise, for example limiter.jdbc.table=" + table.name()
                                + "_counters (lower-case letters, digits and underscores).");
            }
            if (initialization == LimiterProperties.SchemaInitialization.ALWAYS) {
                create(schema, table);
            }
            if (!schema.isPresent()) {
                throw new InvalidLimiterConfigurationException("limiter.jdbc.table", "is " + table.name()
                        + ", but the database has no such table (with " + table.limitsTable() + " and the functions "
                        + table.name() + "_decide, _slide and _acquire_each; a table made by an older DDL lacks the"
                        + " newer ones)", "Create them from " + CounterTable.SCHEMA + " in a Flyway or"
                                + " Liquibase migration (naming the table " + table.name() + "), or set"
                                + " limiter.jdbc.initialize-schema=always so that the limiter creates them at start.");
            }
            String missing = schema.missingPrivileges();
            if (missing != null) {
                throw new InvalidLimiterConfigurationException("limiter.jdbc.table", "is " + table.name()
                        + ", but the application's database " + missing + ": every decision would fail",
                        "Grant them to the application's user (GRANT SELECT, INSERT, UPDATE, DELETE ON " + table.name()
                                + ", " + table.limitsTable() + " TO <user>), or name a table it may use.");
            }
        }
        catch (SQLException ex) {
            if (!JdbcSchema.isUnreachable(ex)) {
                throw new InvalidLimiterConfigurationException("limiter.jdbc.table", "is " + table.name() + ", but "
                        + refusal("check of", table, ex), "Name a table the application's user may use, or grant it"
                                + " SELECT, INSERT, UPDATE and DELETE on " + table.name() + " and "
                                + table.limitsTable() + ".");
            }
            logger.warn("Sliding Limiter could not reach the database at start (" + ex.getMessage() + "): limits on"
                    + " jdbc follow limiter.jdbc.on-failure (or each limit's own) until it answers, and the table "
                    + table.name() + " is not checked. Decisions that fail meanwhile are logged once as an outage.");
        }
    }

    /**
     * Creates the table under {@code initialize-schema: always}; a DDL the database refuses (not one it
     * could not be reached for) fails the start naming that property.
     */
    private static void create(JdbcSchema schema, CounterTable table) throws SQLException {
        try {
            schema.create();
        }
        catch (SQLException ex) {
            if (JdbcSchema.isUnreachable(ex)) {
                throw ex;
            }
            throw new InvalidLimiterConfigurationException("limiter.jdbc.initialize-schema", "is always, but "
                    + refusal("creation of", table, ex), "Create the table from " + CounterTable.SCHEMA
                            + " in a migration run by a user allowed to (or GRANT CREATE ON SCHEMA to the application's"
                            + " user), then set limiter.jdbc.initialize-schema=never.");
        }
    }

    /** What the database answered a statement of the limiter's with: its SQLSTATE and message. */
    private static String refusal(String what, CounterTable table, SQLException ex) {
        return "the database refused the limiter's " + what + " table " + table.name() + " (SQLSTATE "
                + ex.getSQLState() + ": " + ex.getMessage() + ")";
    }

}
