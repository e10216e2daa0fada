package io.slidinglimiter.autoconfigure;

import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;

import io.slidinglimiter.aop.RateLimitedAdvisor;
import io.slidinglimiter.call.InboundCall;

/**
 * The request the current thread serves, found as the limits of annotated methods find it, for
 * beans made before the rate-limit advisor or without it (then always null).
 */
final class CurrentCall implements Supplier<InboundCall> {

    private final ObjectProvider<RateLimitedAdvisor> rateLimitedAdvisor;

    CurrentCall(ObjectProvider<RateLimitedAdvisor> rateLimitedAdvisor) {
        this.rateLimitedAdvisor = rateLimitedAdvisor;
    }

    @Override
    public InboundCall get() {
        RateLimitedAdvisor advisor = this.rateLimitedAdvisor.getIfAvailable();
        return (advisor != null) ? advisor.currentCall() : null;
    }

}
