package io.slidinglimiter.autoconfigure;

import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * Which web stack an application context serves, as Spring Boot chose it: the library applies URL
 * rules and writes 429 responses in a servlet (Spring MVC) application.
 */
enum WebStack {

    /** A servlet web application. */
    SERVLET("a servlet web application"),

    /** A reactive (WebFlux) web application. */
    REACTIVE("a reactive (WebFlux) web application"),

    /** Not a web application. */
    NONE("not a web application");

    private final String description;

    WebStack(String description) {
        this.description = description;
    }

    /** @return what the application is, for a failure message */
    String description() {
        return this.description;
    }

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
