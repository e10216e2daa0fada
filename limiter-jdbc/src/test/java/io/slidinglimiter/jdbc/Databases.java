package io.slidinglimiter.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.slidinglimiter.testsupport.PostgresServer;

/** Pools and tables on a test's own PostgreSQL server, as an application's would be. */
final class Databases {

    private Databases() {
    }

    /**
     * A Hikari pool of the server, as Spring Boot makes one with the validation timeout that
     * docs/postgresql.md asks for (250 ms).
     */
    static HikariDataSource pool(PostgresServer server, int size) {
        return pool(server, size, Duration.ofMillis(250));
    }

    /** A Hikari pool of the server, as Spring Boot makes one with that validation timeout. */
    static HikariDataSource pool(PostgresServer server, int size, Duration validationTimeout) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl());
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(Duration.ofSeconds(30).toMillis());
        config.setValidationTimeout(validationTimeout.toMillis());
        return new HikariDataSource(config);
    }

    /** The counters' table and its function, made from the shipped DDL. */
    static CounterTable createTable(PostgresServer server, String name) {
        CounterTable table = new CounterTable(name);
        server.execute(table.schema());
        return table;
    }

    /**
     * A test's own server with a pool of four and the counters' table, and what the test made on them,
     * closed before them, in the order it was made: {@code @RegisterExtension final Databases.Own
     * database = new Databases.Own();} gives each test its own, closed after it.
     */
    static final class Own implements AfterEachCallback, AutoCloseable {

        final PostgresServer server = PostgresServer.start();

        final HikariDataSource pool = pool(this.server, 4);

        final CounterTable table = createTable(this.server, CounterTable.DEFAULT_NAME);

        private final List<AutoCloseable> closing = new ArrayList<>();

        /** Closes {@code each} with the database, before its pool. */
        <T extends AutoCloseable> T closing(T each) {
            this.closing.add(each);
            return each;
        }

        @Override
        public void afterEach(ExtensionContext context) throws Exception {
            close();
        }

        @Override
        public void close() throws Exception {
            for (AutoCloseable each : this.closing) {
                each.close();
            }
            this.pool.close();
            this.server.close();
        }

    }

}
