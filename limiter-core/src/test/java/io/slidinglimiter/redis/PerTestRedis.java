package io.slidinglimiter.redis;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A redis-server of each test's own, on a free port, and a Lettuce connection factory on it, for
 * tests that stop, pause or restart their server:
 * {@code @RegisterExtension final PerTestRedis redis = new PerTestRedis();}. Both are closed after
 * the test's own {@code @AfterEach} methods.
 */
final class PerTestRedis implements BeforeEachCallback, AfterEachCallback {

    private RedisServer server;

    private LettuceConnectionFactory connectionFactory;

    @Override
    public void beforeEach(ExtensionContext context) {
        this.server = RedisServer.start();
        this.connectionFactory = RedisBackendTests.connectionFactory(this.server.port());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        this.connectionFactory.destroy();
        this.server.close();
    }

    /** @return the test's server */
    RedisServer server() {
        return this.server;
    }

    /** @return a started connection factory on it */
    LettuceConnectionFactory connectionFactory() {
        return this.connectionFactory;
    }

}
