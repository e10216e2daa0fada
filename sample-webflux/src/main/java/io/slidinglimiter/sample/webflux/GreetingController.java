package io.slidinglimiter.sample.webflux;

import java.time.Duration;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

/**
 * Each endpoint shows one way to limit in WebFlux; see the README for curl commands.
 */
@RestController
class GreetingController {

    /** 2 requests per minute for each name, decided when the Mono is subscribed to. */
    @GetMapping("/hello/{name}")
    @RateLimited(name = "hello", limit = 2, window = "1m", key = "#name")
    Mono<String> hello(@PathVariable String name) {
        return Mono.just("hello " + name + "\n");
    }

    /** 1 stream per 10 seconds for each client address. */
    @GetMapping(path = "/ticks", produces = MediaType.TEXT_PLAIN_VALUE)
    @RateLimited(name = "ticks", limit = 1, window = "10s", key = "#clientAddress")
    Flux<String> ticks() {
        return Flux.interval(Duration.ofMillis(100)).take(3).map((tick) -> "tick " + tick + "\n");
    }

    /** No limit of its own: the gateway profile routes to it through a limited route. */
    @GetMapping("/greeting")
    Mono<String> greeting() {
        return Mono.just("greetings\n");
    }

    /** No annotation: limited by the limiter.http.rules entry for /public/**. */
    @GetMapping("/public/news")
    Mono<String> news() {
        return Mono.just("Sliding windows count the recent past.\n");
    }

}
