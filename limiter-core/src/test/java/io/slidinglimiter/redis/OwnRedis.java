package io.slidinglimiter.redis;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A redis-server of a test class's own, on a free port, with a started Lettuce connection factory
 * on it. {@link #perClass()}, in a static field, serves the whole class and is emptied
 * ({@code FLUSHALL}) before each test; {@link #perTest()}, in an instance field, is new for each
 * test, for tests that stop, pause or restart their server. Either is closed after the test's or
 * the class's own {@code @AfterEach} / {@code @AfterAll} methods.
 * <pre>{@code
 * @RegisterExtension
 * static final OwnRedis redis = OwnRedis.perClass();
 * }</pre>
 */
final class OwnRedis implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final boolean perTest;

    private RedisServer server;

    private LettuceConnectionFactory connectionFactory;

    private OwnRedis(boolean perTest) {
        this.perTest = perTest;
    }

    /** @return a server for the whole class, emptied before each test */
    static OwnRedis perClass() {
        return new OwnRedis(false);
    }

    /** @return a new server for each test */
    static OwnRedis perTest() {
        return new OwnRedis(true);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (!this.perTest) {
            start();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (this.perTest) {
            start();
        }
        else {
            flush();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (this.perTest) {
            stop();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (!this.perTest) {
            stop();
        }
    }

    private void start() {
        this.server = RedisServer.start();
        this.connectionFactory = RedisBackendTests.connectionFactory(this.server.port());
    }

    private void stop() {
        this.connectionFactory.destroy();
        this.server.close();
    }

    /** Empties the server ({@code FLUSHALL}): between the seeds of one property test, say. */
    void flush() {
        this.server.call((redis) -> redis.flushall());
    }

    /** @return the server */
    RedisServer server() {
        return this.server;
    }

    /** @return a started connection factory on it */
    LettuceConnectionFactory connectionFactory() {
        return this.connectionFactory;
    }

}
