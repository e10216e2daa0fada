package io.slidinglimiter.web.reactive;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.slidinglimiter.autoconfigure.LimiterRedisAutoConfiguration;
import io.slidinglimiter.testsupport.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * WebFlux applications on the Redis backend, with BlockHound watching every event-loop thread:
 * two instances share one limit exactly, and while Redis is down each policy answers (never a 500)
 * without blocking an event loop. Runs in a JVM of its own (BlockHound instruments it for good).
 */
class ReactiveRedisBlockingTests {

    /** What BlockHound caught blocking a thread that must not block. */
    private static final List<String> BLOCKING_CALLS = new CopyOnWriteArrayList<>();

    /** How Reactor Netty names its event-loop threads. */
    private static final String EVENT_LOOP = "reactor-http-";

    private RedisServer redis;

    private ConfigurableApplicationContext first;

    private ConfigurableApplicationContext second;

    @BeforeAll
    static void watchTheEventLoops() {
        // With the integrations on the class path (Reactor's schedulers), and Reactor Netty's event loops.
        BlockHound.install((builder) -> builder
                .nonBlockingThreadPredicate((others) -> others.or((thread) -> thread.getName().startsWith(EVENT_LOOP)))
                .blockingMethodCallback((method) -> BLOCKING_CALLS.add(method + " on " + Thread.currentThread()
                        .getName())));
    }

    @BeforeEach
    void start() {
        this.redis = RedisServer.start();
        this.first = application();
        this.second = application();
        BLOCKING_CALLS.clear();
    }

    @AfterEach
    void stop() {
        this.first.close();
        this.second.close();
        this.redis.close();
    }

    /** The harness itself: a blocking call on an event-loop thread is caught. */
    @Test
    void blockHoundCatchesABlockingCallOnAnEventLoop() throws InterruptedException {
        Thread eventLoop = new Thread(() -> {
            try {
                Thread.sleep(1);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }, EVENT_LOOP + "check");
        eventLoop.start();
        eventLoop.join();
        // BlockHound names the JDK's own blocking method: Thread.sleep on Java 17, Thread.sleepNanos0 on 25.
        assertThat(BLOCKING_CALLS).singleElement().asString()
                .matches("java\\.lang\\.Thread\\.sleep\\w* on " + java.util.regex.Pattern.quote(EVENT_LOOP + "check"));
    }

    @Test
    void twoInstancesOnOneRedisAdmitExactlyTheLimitBetweenThem() {
        int admitted = 0;
        for (int i = 0; i < 3; i++) {
            admitted += (status(this.first, "/hello/shared") == 200) ? 1 : 0;
            admitted += (status(this.second, "/hello/shared") == 200) ? 1 : 0;
        }
        assertThat(admitted).as("a limit of 2 across both instances").isEqualTo(2);
        assertThat(status(this.second, "/ruled/1")).isEqualTo(200);
        assertThat(status(this.first, "/ruled/2")).isEqualTo(200);
        assertThat(status(this.second, "/ruled/3")).isEqualTo(429);
        assertThat(BLOCKING_CALLS).isEmpty();
    }

    @Test
    void whileRedisIsDownEachPolicyAnswersWithoutBlockingAnEventLoop() {
        assertThat(status(this.first, "/hello/before")).isEqualTo(200);
        this.redis.stop();
        for (int i = 0; i < 5; i++) {
            assertThat(status(this.first, "/hello/during-" + i)).as("fail-open").isEqualTo(200);
            client(this.first).get().uri("/ruled/" + i).exchange().expectStatus().isEqualTo(429)
                    .expectBody(String.class).value((body) -> assertThat(body).contains("could not be checked"));
        }
        assertThat(BLOCKING_CALLS).isEmpty();
    }

    @Test
    void aLeasedLimitTakesAndServesLeasesWithoutBlockingAnEventLoop() {
        for (int i = 0; i < 60; i++) {
            assertThat(status((i % 2 == 0) ? this.first : this.second, "/hello/busy-" + i)).isEqualTo(200);
        }
        assertThat(this.first.getBean(LimiterRedisAutoConfiguration.LimiterRedis.class).backend().status().leaseCounts("busy")
                .fromLease()).isPositive();
        assertThat(BLOCKING_CALLS).isEmpty();
    }

    private ConfigurableApplicationContext application() {
        return new SpringApplicationBuilder(ReactiveTestApplication.class).properties(
                "spring.main.web-application-type=reactive", "server.port=0", "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + this.redis.port(), "limiter.backend=redis",
                "limiter.redis.timeout=200ms", "limiter.limits.ruled.limit=2", "limiter.limits.ruled.window=1m",
                "limiter.limits.ruled.on-failure=fail-closed", "limiter.http.rules[0].limit=ruled",
                "limiter.http.rules[0].path=/ruled/**", "limiter.http.rules[0].key=#clientAddress",
                "limiter.limits.busy.limit=1000", "limiter.limits.busy.window=1m", "limiter.limits.busy.lease=true",
                "limiter.http.rules[1].limit=busy", "limiter.http.rules[1].path=/hello/busy-*",
                "limiter.http.rules[1].key=#clientAddress").run();
    }

    private static int status(ConfigurableApplicationContext application, String path) {
        return client(application).get().uri(path).exchange().returnResult(String.class).getStatus().value();
    }

    private static WebTestClient client(ConfigurableApplicationContext application) {
        int port = ((WebServerApplicationContext) application).getWebServer().getPort();
        return ReactiveHttp.client(port);
    }

}
