package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.core.LimitDefinition;

/**
 * Resolves every {@code @RateLimited} method of every bean before the application serves anything.
 * <p>
 * Resolves every {@code @RateLimited} method of every bean once the singletons exist, before the
 * application serves anything, so that a bad annotation fails the start and not the first call.
 * It also fails the start for a limit that would silently never apply: a method no proxy can
 * intercept ({@code private}, {@code static}, {@code final}, or missing from a JDK proxy's
 * interfaces), a bean that was not proxied, and {@code @Async} methods that return nothing a caller
 * can wait on (a denial would reach no one). So do a method that returns a deferred result other
 * than a {@code Mono}, a {@code Flux}, a {@code CompletionStage} or a {@code CompletableFuture}, a
 * Kotlin {@code suspend} function or {@code Flow} (a plain {@code Future}, another
 * {@code Publisher}, or Kotlin's without kotlinx-coroutines-reactor), whose limit would be decided
 * when the result is built rather than when it runs, and,
 * in a reactive (WebFlux) web application, a method returning a plain value, unless Reactor
 * propagates its context to thread locals (so that the method sees the request it serves) and none
 * of its own limits waits for I/O (which would block an event loop).
 */
public final class RateLimitedMethodsValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;

    /** The deferred results no limit can be decided for: the type's name, and what users call it. */
    private static final Map<String, String> DEFERRED_RESULTS = new LinkedHashMap<>();

    static {
        DEFERRED_RESULTS.put("org.reactivestreams.Publisher", "a Publisher other than a Mono or a Flux");
        DEFERRED_RESULTS.put("java.util.concurrent.CompletionStage",
                "a CompletionStage other than a CompletableFuture or the interface itself");
        DEFERRED_RESULTS.put("java.util.concurrent.Future", "a Future other than a CompletableFuture");
        DEFERRED_RESULTS.put("kotlinx.coroutines.flow.Flow", "a Kotlin Flow without"
                + " org.jetbrains.kotlinx:kotlinx-coroutines-reactor on the class path (its values are collected"
                + " through it)");
    }

    private final RateLimitedOperationSource operations;

    private final boolean reactiveWeb;

    private final boolean contextPropagation;

    private final Predicate<LimitDefinition> limitMayBlock;

    /**
     * Creates the validator.
     * @param beanFactory the factory whose beans are checked
     * @param operations resolves and caches each method's limits
     * @param reactiveWeb whether the application is a reactive (WebFlux) web application
     * @param contextPropagation whether Reactor propagates its context to thread locals
     * ({@code spring.reactor.context-propagation=auto} with {@code io.micrometer:context-propagation})
     * @param limitMayBlock whether a limit's decisions may wait for I/O (asked only for a reactive
     * web application's methods returning a plain value)
     */
    public RateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory,
            RateLimitedOperationSource operations, boolean reactiveWeb, boolean contextPropagation,
            Predicate<LimitDefinition> limitMayBlock) {
        this.beanFactory = beanFactory;
        this.operations = operations;
        this.reactiveWeb = reactiveWeb;
        this.contextPropagation = contextPropagation;
        this.limitMayBlock = limitMayBlock;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<Method, Class<?>> methods = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        for (String name : this.beanFactory.getBeanDefinitionNames()) {
            Class<?> type = this.beanFactory.getType(name, false);
            if (type == null || type.getName().startsWith("org.springframework.")) {
                continue;
            }
            Object bean = this.beanFactory.containsSingleton(name) ? this.beanFactory.getSingleton(name) : null;
            Class<?> userClass = (bean != null) ? AopProxyUtils.ultimateTargetClass(bean) : ClassUtils.getUserClass(type);
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
                if (!this.operations.isRateLimited(method, userClass)) {
                    continue;
                }
                Problem unreachable = unsupported(method, userClass);
                if (unreachable == null) {
                    unreachable = unreachable(name, bean, method, userClass);
                }
                if (unreachable != null) {
                    problems.add(unreachable);
                }
                else {
                    methods.put(method, userClass);
                }
            }
        }
        problems.addAll(resolve(methods));
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
    }

    /** Why a limit on {@code method} cannot work as users expect yet, or null when it can. */
    private Problem unsupported(Method method, Class<?> userClass) {
        if (ReactiveCalls.subscribed(method, this.beanFactory.getBeanClassLoader()) != null) {
            return null;
        }
        String subject = "@RateLimited on " + RateLimitedOperationSource.describe(method, userClass);
        String deferred = deferredResult(method);
        if (deferred != null) {
            return new Problem(subject, "the method returns " + deferred + ", so the limit would be decided when"
                    + " the result is built, not when its work runs, and a denial would not reach whoever"
                    + " waits for it", "Return a plain value or a CompletableFuture (decided before the method"
                            + " runs), a Mono or a Flux (decided when subscribed to); in Kotlin, a suspend function"
                            + " or a Flow, with kotlinx-coroutines-reactor. Or call RateLimiters.tryAcquire where"
                            + " the work runs.");
        }
        if (this.reactiveWeb && !this.contextPropagation) {
            return new Problem(subject, "this is a reactive (WebFlux) web application and the method returns a"
                    + " plain value: it cannot see the request it serves (#request, #principal, #clientAddress),"
                    + " and a denial could not be told apart from the application's own errors, unless Reactor"
                    + " propagates its context to thread locals",
                    "Return a Mono or a Flux: the limit is then decided when the result is subscribed to. Or add"
                            + " io.micrometer:context-propagation and set spring.reactor.context-propagation=auto.");
        }
        return null;
    }

    /**
     * Whether a method returns a stage the limiter can fail with a denial: a {@code CompletionStage}
     * or a {@code CompletableFuture}, exactly (a failed {@code CompletableFuture} is either).
     * @param method a method
     * @return whether its limit is decided before it runs and a denial fails its stage
     */
    static boolean returnsStage(Method method) {
        return method.getReturnType() == CompletionStage.class || method.getReturnType() == CompletableFuture.class;
    }

    /**
     * Whether Spring runs a method on an executor ({@code @Async} on it or on its class).
     * @param method a method
     * @param userClass the class of the bean it is called on
     * @return whether it is {@code @Async}
     */
    static boolean isAsync(Method method, Class<?> userClass) {
        return AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(userClass, Async.class);
    }

    /** What deferred result a method returns that no limit can be decided for, or null for none. */
    private static String deferredResult(Method method) {
        Class<?>[] parameters = method.getParameterTypes();
        if (parameters.length > 0 && parameters[parameters.length - 1].getName()
                .equals("kotlin.coroutines.Continuation")) {
            // Supported with kotlinx-coroutines-reactor, which Spring AOP needs to advise it.
            return "through a Kotlin suspend function without org.jetbrains.kotlinx:kotlinx-coroutines-reactor on"
                    + " the class path (Spring AOP runs advice around a suspend function as a Mono, through it)";
        }
        if (returnsStage(method)) {
            return null;
        }
        for (Map.Entry<String, String> deferred : DEFERRED_RESULTS.entrySet()) {
            ClassLoader classLoader = method.getDeclaringClass().getClassLoader();
            if (ClassUtils.isPresent(deferred.getKey(), classLoader) && ClassUtils
                    .resolveClassName(deferred.getKey(), classLoader).isAssignableFrom(method.getReturnType())) {
                return deferred.getValue();
            }
        }
        return null;
    }

    /** Why calls of {@code method} would never be limited, or null when they will be. */
    private static Problem unreachable(String beanName, Object bean, Method method, Class<?> userClass) {
        String subject = "@RateLimited on " + RateLimitedOperationSource.describe(method, userClass);
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers)) {
            return new Problem(subject, "the method is " + (Modifier.isPrivate(modifiers) ? "private" : "static")
                    + ", so no Spring proxy can intercept it and the limit would never apply",
                    "Make the method public (or protected) and non-static, and call it through the bean.");
        }
        if (!returnsStage(method) && isAsync(method, userClass)) {
            return new Problem(subject, "the method is @Async and returns nothing its caller waits on, so a"
                    + " denial, decided on the executor's thread, would reach no one",
                    "Return a CompletableFuture: a denial then fails it, and the method's body does not run."
                            + " Or rate-limit the caller (a method or URL rule that then calls the @Async"
                            + " method).");
        }
        if (bean == null) {
            return null;
        }
        boolean jdkProxy = Proxy.isProxyClass(bean.getClass());
        if (Modifier.isFinal(modifiers) && !jdkProxy) {
            return new Problem(subject, "the " + (FinalClasses.isKotlin(userClass) ? "function" : "method")
                    + " is final, so the class-based proxy cannot override it and the limit would never apply",
                    FinalClasses.fix(userClass, method));
        }
        if (!(bean instanceof Advised advised)
                || Arrays.stream(advised.getAdvisors()).noneMatch(RateLimitedAdvisor.class::isInstance)) {
            return new Problem(subject, "bean '" + beanName + "' was created without the rate-limiting proxy,"
                    + " usually because a post-processor needed it early, so the limit would never apply",
                    "Do not inject bean '" + beanName + "' into a BeanPostProcessor or a static @Bean method's"
                            + " parameters, or inject it there through ObjectProvider.");
        }
        if (jdkProxy && Arrays.stream(advised.getProxiedInterfaces()).noneMatch((face) ->
                ClassUtils.hasMethod(face, method.getName(), method.getParameterTypes()))) {
            return new Problem(subject, "bean '" + beanName + "' is a JDK interface proxy and the method is on none"
                    + " of its interfaces, so calls cannot reach the limit",
                    "Declare the method on an interface the bean implements, or proxy classes"
                            + " (spring.aop.proxy-target-class=true, Spring Boot's default).");
        }
        return null;
    }

    /**
     * Resolves each method's limits. A name may be defined inline on one method and used by name on
     * another: resolve until no more progress is made, then report what is left.
     */
    private List<Problem> resolve(Map<Method, Class<?>> methods) {
        List<InvalidLimiterConfigurationException> failures = new ArrayList<>();
        List<Problem> blockingProblems = new ArrayList<>();
        while (!methods.isEmpty()) {
            failures.clear();
            Map<Method, Class<?>> failed = new LinkedHashMap<>();
            methods.forEach((method, userClass) -> {
                try {
                    RateLimitedOperation operation = this.operations.operationFor(method, userClass);
                    Problem blocking = blocksAnEventLoop(method, userClass, operation);
                    if (blocking != null) {
                        blockingProblems.add(blocking);
                    }
                }
                catch (InvalidLimiterConfigurationException ex) {
                    failed.put(method, userClass);
                    failures.add(ex);
                }
            });
            if (failed.size() == methods.size()) {
                break;
            }
            methods = failed;
        }
        List<Problem> problems = new ArrayList<>(blockingProblems);
        failures.forEach((failure) -> problems.addAll(failure.getProblems()));
        return problems;
    }

    /**
     * In a reactive web application, a method returning a plain value is decided on the calling
     * thread, an event loop for a controller: refused when one of its own limits waits for Redis.
     */
    private Problem blocksAnEventLoop(Method method, Class<?> userClass, RateLimitedOperation operation) {
        // A stage-returning method is decided before it runs, on the calling thread, as a plain one is.
        if (!this.reactiveWeb || operation.reactive()) {
            return null;
        }
        List<String> blocking = operation.limits().stream().map((limit) -> limit.limit().definition())
                .filter(this.limitMayBlock).map(LimitDefinition::name).distinct().toList();
        if (blocking.isEmpty()) {
            return null;
        }
        return new Problem("@RateLimited on " + RateLimitedOperationSource.describe(method, userClass),
                "this is a reactive (WebFlux) web application and the method returns a plain value or a stage"
                        + " decided before it runs, so its limit is decided on the calling thread, an event loop for a controller, and the decisions of "
                        + String.join(", ", blocking) + " wait for Redis: the event loop would block",
                "Return a Mono or a Flux: the limit is then decided when the result is subscribed to, without"
                        + " blocking. Or put the limit on the local backend (limiter.limits.<name>.backend=local).");
    }

}
