package io.slidinglimiter.autoconfigure;

import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * Which web stack an application context serves, as Spring Boot chose it.
 * <p>
 * The limiter applies URL
 * rules and writes 429 responses with a servlet filter or a WebFlux {@code WebFilter}.
 */
enum WebStack {

    /** A servlet web application. */
    SERVLET,

    /** A reactive (WebFlux) web application. */
    REACTIVE,

    /** Not a web application. */
    NONE;

    /**
     * The stack of an application context.
     * @param context the context
     * @return its stack
     */
    static WebStack of(ApplicationContext context) {
        if (isInstance(context, "org.springframework.web.context.WebApplicationContext")) {
            return SERVLET;
        }
        if (isInstance(context, "org.springframework.boot.web.context.reactive.ReactiveWebApplicationContext")) {
            return REACTIVE;
        }
        return NONE;
    }

    private static boolean isInstance(ApplicationContext context, String typeName) {
        ClassLoader classLoader = context.getClassLoader();
        return ClassUtils.isPresent(typeName, classLoader)
                && ClassUtils.resolveClassName(typeName, classLoader).isInstance(context);
    }

}
