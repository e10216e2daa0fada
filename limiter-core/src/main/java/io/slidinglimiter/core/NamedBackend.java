package io.slidinglimiter.core;

import java.util.Locale;
import java.util.Objects;

/**
 * A backend under the name limits choose it by ({@code limiter.backend},
 * {@code limiter.limits.<name>.backend}).
 * <p>
 * Each module that brings a backend contributes one, as a
 * bean, and the limiter routes every limit to the backend it names ({@link RoutingBackend#byName}).
 * The in-process backend is always there as {@value #LOCAL}.
 * <pre>{@code
 * @Bean
 * NamedBackend myStoreBackend(MyStore store) {
 *     return new NamedBackend("my-store", new MyStoreBackend(store));
 * }
 * }</pre>
 * @param name the name limits choose it by: lower case, as properties are written
 * @param backend the backend
 */
public record NamedBackend(String name, RateLimitBackend backend) {

    /** The in-process backend's name. */
    public static final String LOCAL = "local";

    /**
     * Checks the name.
     * @param name the name limits choose it by
     * @param backend the backend
     */
    public NamedBackend {
        Objects.requireNonNull(backend, "backend");
        if (name == null || name.isBlank() || !name.equals(name.trim().toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("A backend's name must be non-blank lower case, but was '" + name + "'");
        }
    }

}
