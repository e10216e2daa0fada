package io.slidinglimiter.testsupport;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A redis-server of a test class's own, on a free port, with a started Lettuce connection factory
 * on it. {@link #perClass()}, in a static field, serves the whole class and is emptied
 * ({@code FLUSHALL}) before each test; {@link #perTest()}, in an instance field, is new for each
 * test, for tests that stop, pause or restart their server. Either is closed after the test's or
 * the class's own {@code @AfterEach} / {@code @AfterAll} methods. Servers are started as
 * {@link RedisServer} starts them: the {@code redis-server} on {@code PATH}, else the binary shipped
 * in {@code com.github.codemonstur:embedded-redis}; nothing touches port 6379.
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension redis = RedisExtension.perClass();
 * }</pre>
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final boolean perTest;

    private final boolean emptied;

    private RedisServer server;

    private LettuceConnectionFactory connectionFactory;

    private RedisExtension(boolean perTest, boolean emptied) {
        this.perTest = perTest;
        this.emptied = emptied;
    }

    /** @return a server for the whole class, emptied before each test */
    public static RedisExtension perClass() {
        return new RedisExtension(false, true);
    }

    /**
     * A server for the whole class that keeps what its tests wrote: for classes whose tests share
     * an application started once.
     * @return the extension
     */
    public static RedisExtension perClassKeepingData() {
        return new RedisExtension(false, false);
    }

    /** @return a new server for each test */
    public static RedisExtension perTest() {
        return new RedisExtension(true, false);
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
        else if (this.emptied) {
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
        this.connectionFactory = connectionFactory(this.server.port());
    }

    private void stop() {
        this.connectionFactory.destroy();
        this.server.close();
    }

    /** Empties the server ({@code FLUSHALL}): between the seeds of one property test, say. */
    public void flush() {
        this.server.call((redis) -> redis.flushall());
    }

    /** @return the server */
    public RedisServer server() {
        return this.server;
    }

    /**
     * The properties that put every limit of a Spring Boot application on this server.
     * @return {@code limiter.backend=redis} and the server's address
     */
    public String[] limiterProperties() {
        return new String[] { "limiter.backend=redis", "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + this.server.port() };
    }

    /**
     * A started Lettuce connection factory on a server.
     * @param port the server's port
     * @return the factory; its caller destroys it
     */
    public static LettuceConnectionFactory connectionFactory(int port) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    /** @return a started connection factory on it */
    public LettuceConnectionFactory connectionFactory() {
        return this.connectionFactory;
    }

}
