package io.slidinglimiter.sample.webflux;

import reactor.core.publisher.Mono;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

/**
 * For the HTTP load run in BENCHMARKS.md (profile {@code bench}).
 * <p>
 * The same endpoint with a limit
 * that is never reached, and without one.
 */
@RestController
@Profile("bench")
class BenchmarkEndpoints {

    @GetMapping("/bench/plain")
    Mono<String> plain() {
        return Mono.just("ok");
    }

    @GetMapping("/bench/limited")
    @RateLimited(name = "bench", limit = 1_000_000_000, window = "1s", key = "#clientAddress")
    Mono<String> limited() {
        return Mono.just("ok");
    }

}
