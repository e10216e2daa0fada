package io.slidinglimiter.benchmarks;

import io.slidinglimiter.annotation.RateLimited;

/**
 * A method with a limit never reached, keyed by a parameter, beside the same method without one.
 */
public class BenchService {

    @RateLimited(name = "allow", key = "#key")
    public String call(String key) {
        return key;
    }

    public String plain(String key) {
        return key;
    }

}
