package io.slidinglimiter.web.reactive;

import java.time.Duration;

import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A {@link WebTestClient} bound to a running server over real HTTP, for the WebFlux and gateway tests.
 */
public final class ReactiveHttp {

    private ReactiveHttp() {
    }

    /**
     * @param port the server's port on the loopback address
     * @return a client of it
     */
    public static WebTestClient client(int port) {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(10))
                .build();
    }

}
