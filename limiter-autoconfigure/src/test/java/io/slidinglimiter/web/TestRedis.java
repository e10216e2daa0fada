package io.slidinglimiter.web;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.slidinglimiter.redis.RedisServer;

/**
 * A redis-server of a test class's own, on a free port, for as long as the class runs:
 * {@code @RegisterExtension static final TestRedis redis = new TestRedis();}.
 */
final class TestRedis implements BeforeAllCallback, AfterAllCallback {

    private RedisServer server;

    @Override
    public void beforeAll(ExtensionContext context) {
        this.server = RedisServer.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        this.server.close();
    }

    /** @return the running server */
    RedisServer server() {
        return this.server;
    }

    /** @return the properties that put every limit of an application on this server */
    String[] properties() {
        return new String[] { "limiter.backend=redis", "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + this.server.port() };
    }

}
