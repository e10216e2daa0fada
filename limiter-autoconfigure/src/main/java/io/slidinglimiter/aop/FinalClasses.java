package io.slidinglimiter.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.annotation.RateLimits;

/**
 * What to tell a developer whose {@code @RateLimited} class or method is final, which the
 * class-based proxy cannot override.
 * <p>
 * In Kotlin's words for Kotlin sources, where classes and
 * functions are final unless declared {@code open} or opened by the {@code kotlin-spring}
 * (all-open) compiler plugin.
 */
final class FinalClasses {

    private FinalClasses() {
    }

    /**
     * Whether a class was compiled from Kotlin (it carries {@code kotlin.Metadata}).
     * @param type a class
     * @return true for a Kotlin class
     */
    static boolean isKotlin(Class<?> type) {
        for (Annotation annotation : type.getDeclaredAnnotations()) {
            if (annotation.annotationType().getName().equals("kotlin.Metadata")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a class, or any of its methods, carries {@code @RateLimited}.
     * @param type a class
     * @return true when some call of it would be limited
     */
    static boolean isRateLimited(Class<?> type) {
        if (AnnotatedElementUtils.hasAnnotation(type, RateLimited.class)
                || AnnotatedElementUtils.hasAnnotation(type, RateLimits.class)) {
            return true;
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (AnnotatedElementUtils.hasAnnotation(method, RateLimited.class)
                    || AnnotatedElementUtils.hasAnnotation(method, RateLimits.class)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The fix for a final class or method that carries {@code @RateLimited}.
     * @param type the class
     * @param method the final method, or null when the class itself is final
     * @return what to change, in the words of the class's language
     */
    static String fix(Class<?> type, Method method) {
        if (isKotlin(type)) {
            String what = (method != null) ? "the class " + type.getSimpleName() + " and the function "
                    + method.getName() : "the class " + type.getSimpleName() + " and its @RateLimited functions";
            return "Kotlin classes and functions are final unless declared open: declare " + what + " open, or"
                    + " apply the kotlin-spring compiler plugin (all-open), which opens @Component, @Service and"
                    + " @RestController classes and their functions, and add"
                    + " io.slidinglimiter.annotation.RateLimited to its annotations for classes it does not"
                    + " open by itself.";
        }
        return (method != null) ? "Remove final from the method (and from its class)." : "Remove final from the class.";
    }

}
