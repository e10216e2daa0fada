package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.slidinglimiter.autoconfigure.InvalidLimiterConfigurationException;

/**
 * Resolves every {@code @RateLimited} method of every bean once the singletons exist, before the
 * application serves anything, so that a bad annotation fails the start and not the first call.
 */
public final class RateLimitedMethodsValidator implements SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beanFactory;

    private final RateLimitedOperationSource operations;

    /**
     * Creates the validator.
     * @param beanFactory the factory whose beans are checked
     * @param operations resolves and caches each method's limits
     */
    public RateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory,
            RateLimitedOperationSource operations) {
        this.beanFactory = beanFactory;
        this.operations = operations;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<Method, Class<?>> methods = new LinkedHashMap<>();
        for (String name : this.beanFactory.getBeanDefinitionNames()) {
            Class<?> type = this.beanFactory.getType(name, false);
            if (type == null || type.getName().startsWith("org.springframework.")) {
                continue;
            }
            Class<?> userClass = ClassUtils.getUserClass(type);
            for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS)) {
                if (this.operations.isRateLimited(method, userClass)) {
                    methods.put(method, userClass);
                }
            }
        }
        // A name may be defined inline on one method and used by name on another: resolve until no
        // more progress is made, then report what is left.
        List<InvalidLimiterConfigurationException> failures = new ArrayList<>();
        while (!methods.isEmpty()) {
            failures.clear();
            Map<Method, Class<?>> failed = new LinkedHashMap<>();
            methods.forEach((method, userClass) -> {
                try {
                    this.operations.operationFor(method, userClass);
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
        if (!failures.isEmpty()) {
            throw new InvalidLimiterConfigurationException(
                    failures.stream().flatMap((failure) -> failure.getProblems().stream()).toList());
        }
    }

}
