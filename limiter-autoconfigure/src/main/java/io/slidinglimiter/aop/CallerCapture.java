package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.Advisor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.config.BeanPostProcessor;

import io.slidinglimiter.call.InboundCall;

/**
 * Carries the web request a call serves across {@code @Async}'s hop to an executor: on beans whose
 * proxy runs the call on another thread before it reaches the limit, an advisor placed first notes
 * the caller's request on the call itself, so that the limit, decided on the executor's thread,
 * still records its decisions for that request's {@code RateLimit} headers. Runs after Spring's own
 * post-processors, which put the {@code @Async} advisor first.
 */
public final class CallerCapture implements BeanPostProcessor {

    /** The call's attribute that holds the request it serves. */
    static final String WEB_CALL = CallerCapture.class.getName() + ".webCall";

    private final Advisor advisor;

    /**
     * @param current the request the current thread serves, or null
     */
    public CallerCapture(Supplier<InboundCall> current) {
        this.advisor = new CaptureAdvisor(current);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof Advised advised && !advised.isFrozen() && hopsBeforeTheLimit(advised)) {
            advised.addAdvisor(0, this.advisor);
        }
        return bean;
    }

    /** Whether an advisor before the limit's runs the call elsewhere (Spring's {@code @Async}). */
    private boolean hopsBeforeTheLimit(Advised advised) {
        for (Advisor each : advised.getAdvisors()) {
            if (each instanceof RateLimitedAdvisor || each == this.advisor) {
                return false;
            }
            if (each.getClass().getName().equals("org.springframework.scheduling.annotation.AsyncAnnotationAdvisor")) {
                return true;
            }
        }
        return false;
    }

    /** The request a call serves, noted by the capture on the caller's thread; null when none was. */
    static InboundCall of(MethodInvocation invocation) {
        return (invocation instanceof ProxyMethodInvocation call
                && call.getUserAttribute(WEB_CALL) instanceof InboundCall web) ? web : null;
    }

    /** Notes the caller's request on each rate-limited call. */
    private static final class CaptureAdvisor extends AbstractPointcutAdvisor {

        private final transient Supplier<InboundCall> current;

        private final Pointcut pointcut = new StaticMethodMatcherPointcut() {

            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return !RateLimitedPointcut.annotationsOf(method, targetClass).isEmpty();
            }

        };

        CaptureAdvisor(Supplier<InboundCall> current) {
            this.current = current;
        }

        @Override
        public Pointcut getPointcut() {
            return this.pointcut;
        }

        @Override
        public MethodInterceptor getAdvice() {
            return (invocation) -> {
                InboundCall web = this.current.get();
                if (web != null && invocation instanceof ProxyMethodInvocation call) {
                    call.setUserAttribute(WEB_CALL, web);
                }
                return invocation.proceed();
            };
        }

    }

}
