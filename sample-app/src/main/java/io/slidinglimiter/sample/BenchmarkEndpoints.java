package io.slidinglimiter.sample;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

/**
 * For the HTTP load runs in BENCHMARKS.md (profile {@code bench}).
 * <p>
 * The same endpoint with a limit
 * that is never reached, and without one; and one keyed by a user named in the request, for runs
 * over many keys ({@code benchmarks/overload.sh}).
 */
@RestController
@Profile("bench")
class BenchmarkEndpoints {

    @GetMapping("/bench/plain")
    String plain() {
        return "ok";
    }

    @GetMapping("/bench/limited")
    @RateLimited(name = "bench", limit = 1_000_000_000, window = "1s", key = "#request.remoteAddr")
    String limited() {
        return "ok";
    }

    @GetMapping("/bench/users")
    @RateLimited(name = "bench-users", limit = 1_000_000_000, window = "1m", key = "#user")
    String users(@RequestParam String user) {
        return "ok";
    }

    /**
     * A token budget as in "Charging after the call": 200 tokens reserved, the call settled to what
     * it used (146 here, as a model's reply might).
     */
    @GetMapping("/bench/tokens")
    @RateLimited(name = "bench-tokens", limit = 2_000, window = "1m", key = "#user", cost = "200",
            charge = "#result.tokens()")
    Completion tokens(@RequestParam String user) {
        return new Completion("ok", 146);
    }

    record Completion(String text, long tokens) {
    }

}
