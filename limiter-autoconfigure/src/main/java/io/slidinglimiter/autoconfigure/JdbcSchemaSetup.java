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
 * table fails it with the DDL's location and both ways to create it. A database that does not answer
 * at start is said once: the application starts, and decisions follow the failure policy until it
 * answers (the table is checked by the first of them).
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
     * @throws InvalidLimiterConfigurationException for another database, or a missing table
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
            if (initialization == LimiterProperties.SchemaInitialization.ALWAYS) {
                schema.create();
            }
            if (!schema.isPresent()) {
                throw new InvalidLimiterConfigurationException("limiter.jdbc.table", "is " + table.name()
                        + ", but the database has no such table (with " + table.limitsTable() + " and the functions "
                        + table.name() + "_decide, _slide and _acquire_each; a table made by an older DDL lacks the"
                        + " newer ones)", "Create them from " + CounterTable.SCHEMA + " in a Flyway or"
                                + " Liquibase migration (naming the table " + table.name() + "), or set"
                                + " limiter.jdbc.initialize-schema=always so that the limiter creates them at start.");
            }
        }
        catch (SQLException ex) {
            logger.warn("Sliding Limiter could not reach the database at start (" + ex.getMessage() + "): limits on"
                    + " jdbc follow limiter.jdbc.on-failure (or each limit's own) until it answers, and the table "
                    + table.name() + " is not checked. Decisions that fail meanwhile are logged once as an outage.");
        }
    }

}
