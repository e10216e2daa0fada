package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;

import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.annotation.RateLimits;

/**
 * Matches the methods that carry {@code @RateLimited}, on the method (of the class called, or of
 * an interface it implements) or, for public methods, on the class. Reads annotations only, so the
 * advisor needs no other bean while post-processors are still being created.
 * <p>
 * {@code toString}, {@code equals} and {@code hashCode} are never limited by a type-level
 * annotation: logging or putting a bean in a map must not use up a limit.
 */
final class RateLimitedPointcut extends StaticMethodMatcherPointcut {

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return !annotationsOf(method, targetClass).isEmpty();
    }

    /**
     * The {@code @RateLimited} annotations that apply to a call.
     * @param method the method called, possibly declared on an interface
     * @param targetClass the class of the object called, or null
     * @return the annotations, empty when the call is not limited
     */
    static List<RateLimited> annotationsOf(Method method, Class<?> targetClass) {
        Method specific = specificMethod(method, targetClass);
        List<RateLimited> onMethod = List.copyOf(
                AnnotatedElementUtils.findMergedRepeatableAnnotations(specific, RateLimited.class, RateLimits.class));
        if (!onMethod.isEmpty() || targetClass == null || !Modifier.isPublic(specific.getModifiers())
                || specific.getDeclaringClass() == Object.class || isObjectMethod(specific)) {
            return onMethod;
        }
        return List.copyOf(AnnotatedElementUtils.findMergedRepeatableAnnotations(ClassUtils.getUserClass(targetClass),
                RateLimited.class, RateLimits.class));
    }

    /** The implementation that a call of {@code method} on {@code targetClass} runs. */
    static Method specificMethod(Method method, Class<?> targetClass) {
        return (targetClass != null) ? AopUtils.getMostSpecificMethod(method, targetClass) : method;
    }

    private static boolean isObjectMethod(Method method) {
        return AopUtils.isToStringMethod(method) || AopUtils.isEqualsMethod(method)
                || AopUtils.isHashCodeMethod(method);
    }

}
