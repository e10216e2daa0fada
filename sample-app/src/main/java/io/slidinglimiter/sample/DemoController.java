package io.slidinglimiter.sample;

import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.slidinglimiter.annotation.RateLimited;

/**
 * Each endpoint shows one way to limit; see the README for curl commands.
 */
@RestController
class DemoController {

    private final QuoteService quotes;

    DemoController(QuoteService quotes) {
        this.quotes = quotes;
    }

    /** 5 requests per 10 seconds for each client address, defined inline. */
    @GetMapping("/api/hello")
    @RateLimited(name = "hello", limit = 5, window = "10s", key = "#request.remoteAddr")
    Map<String, String> hello(HttpServletRequest request) {
        return Map.of("message", "Hello, " + request.getRemoteAddr());
    }

    /** 3 requests per 10 seconds for each user in the path. */
    @GetMapping("/api/users/{userId}/profile")
    @RateLimited(name = "profile", limit = 3, window = "10s", key = "#userId")
    Map<String, String> profile(@PathVariable String userId) {
        return Map.of("user", userId);
    }

    /** Limits by API key (limiter.limits.api-key in application.yml); a missing header is denied. */
    @GetMapping("/api/data")
    @RateLimited(name = "api-key", key = "#apiKey")
    Map<String, String> data(@RequestHeader(name = "X-Api-Key", required = false) String apiKey) {
        return Map.of("data", "42");
    }

    /** 5 login attempts per minute for each user name (limiter.limits.login). */
    @PostMapping("/login")
    @RateLimited(name = "login", key = "#username")
    Map<String, String> login(@RequestParam String username) {
        return Map.of("user", username, "status", "welcome");
    }

    /** A report costs one permit per page: 20 pages per minute for each client address. */
    @GetMapping("/api/reports")
    @RateLimited(name = "report-pages", limit = 20, window = "1m", key = "#request.remoteAddr", cost = "#pages")
    Map<String, Object> report(@RequestParam(defaultValue = "1") int pages, HttpServletRequest request) {
        return Map.of("pages", pages);
    }

    /** No annotation: limited by the limiter.http.rules entry for /public/**. */
    @GetMapping("/public/news")
    Map<String, String> news() {
        return Map.of("news", "Sliding windows count the recent past.");
    }

    /** Limited in the service layer: QuoteService.quote allows 10 calls per 10 seconds in all. */
    @GetMapping("/api/quote")
    Map<String, String> quote() {
        return Map.of("quote", this.quotes.quote());
    }

}
