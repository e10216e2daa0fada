package io.slidinglimiter.jdbc;

import java.time.Duration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

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

}
