package io.slidinglimiter.sample;

import org.springframework.stereotype.Service;

import io.slidinglimiter.annotation.RateLimited;

/**
 * A service-layer limit: whoever calls it, at most 10 quotes per 10 seconds. Outside a web
 * request a denied call throws {@code RateLimitExceededException}; inside one it becomes 429.
 */
@Service
public class QuoteService {

    @RateLimited(name = "quotes", limit = 10, window = "10s")
    public String quote() {
        return "The best way to predict the future is to limit it.";
    }

}
