package io.slidinglimiter.benchmarks;

import io.slidinglimiter.annotation.RateLimited;

/**
 * The annotated methods the benchmarks call.
 * <p>
 * A method with a limit never reached, keyed by a parameter, beside the same method without one,
 * and two charged after the call: settled lower than their cost, and charged their cost.
 */
public class BenchService {

    @RateLimited(name = "allow", key = "#key")
    public String call(String key) {
        return key;
    }

    /** Admitted against 2, charged 1 when it returns: a settle that gives one permit back. */
    @RateLimited(name = "charged-less", key = "#key", cost = "2", charge = "1")
    public String chargedLess(String key) {
        return key;
    }

    /** Charged what it cost: the charge is evaluated, nothing is settled. */
    @RateLimited(name = "charged-same", key = "#key", charge = "1")
    public String chargedSame(String key) {
        return key;
    }

    public String plain(String key) {
        return key;
    }

    /** Intercepted by an advice that does nothing: Spring AOP's own cost. */
    @NoopAdvised
    public String advised(String key) {
        return key;
    }

}
