package io.slidinglimiter.aop;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;

import io.slidinglimiter.call.InboundCall;

/**
 * Proxies the beans that have {@code @RateLimited} methods, like Spring's own {@code @Cacheable}
 * support: no AspectJ weaver needed. Runs early among advisors, so a denied call opens no
 * transaction and takes no other resource.
 */
public final class RateLimitedAdvisor extends AbstractPointcutAdvisor {

    /** The advisor's default order: before transactions and caching. */
    public static final int DEFAULT_ORDER = HIGHEST_PRECEDENCE + 1000;

    private final Pointcut pointcut = new RateLimitedPointcut();

    private final RateLimitedInterceptor interceptor;

    /**
     * Creates the advisor.
     * @param interceptor applies the limits
     */
    public RateLimitedAdvisor(RateLimitedInterceptor interceptor) {
        this.interceptor = interceptor;
        setOrder(DEFAULT_ORDER);
    }

    @Override
    public Pointcut getPointcut() {
        return this.pointcut;
    }

    /**
     * The request the current thread serves, as the limit's interceptor finds it: a servlet request,
     * a WebFlux request whose context Reactor propagates, or a gRPC call; null otherwise.
     * @return the request, or null
     */
    public InboundCall currentCall() {
        return this.interceptor.currentCall();
    }

    @Override
    public Advice getAdvice() {
        return this.interceptor;
    }

}
