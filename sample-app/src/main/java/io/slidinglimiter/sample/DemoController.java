package io.slidinglimiter.sample;

import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
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

    /**
     * Failed sign-ins only: 3 per minute for each user name. A good password counts nothing (the
     * charge is 0), so a user who signs in often is never locked out; after 3 wrong ones, even the
     * right password waits.
     */
    @PostMapping("/signin")
    @RateLimited(name = "failed-signins", limit = 3, window = "1m", key = "#username",
            charge = "#result.statusCode.value() == 401 ? 1 : 0")
    ResponseEntity<Map<String, String>> signIn(@RequestParam String username, @RequestParam String password) {
        if (!password.equals("secret")) {
            return ResponseEntity.status(HttpStatus.UNAUTHORIZED)
                    .body(Map.of("user", username, "status", "wrong password"));
        }
        return ResponseEntity.ok(Map.of("user", username, "status", "welcome"));
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
