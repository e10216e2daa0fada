package io.slidinglimiter.web;

import java.util.HashSet;
import java.util.Set;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

import io.slidinglimiter.expression.KeyExpression;

/**
 * A {@code limiter.http.rules} entry, compiled: the limit to apply to requests whose path matches
 * and whose method is listed (or any, when none is). A rule for GET covers HEAD too, since Spring
 * MVC answers HEAD with the GET handler.
 *
 * @param limitName the limit's name, under {@code limiter.limits}
 * @param path the path pattern
 * @param methods upper-case HTTP methods; empty for all
 * @param key the counter key over {@code #request}, {@code #principal} and {@code #clientAddress}
 */
public record HttpRule(String limitName, PathPattern path, Set<String> methods, KeyExpression key) {

    /** The variables a rule's key may use. */
    public static final Set<String> KEY_VARIABLES = Set.of("request", "principal", "clientAddress");

    public HttpRule {
        if (methods.contains("GET") && !methods.contains("HEAD")) {
            methods = new HashSet<>(methods);
            methods.add("HEAD");
        }
        methods = Set.copyOf(methods);
    }

    boolean matches(String method, PathContainer path) {
        return (this.methods.isEmpty() || this.methods.contains(method)) && this.path.matches(path);
    }

}
