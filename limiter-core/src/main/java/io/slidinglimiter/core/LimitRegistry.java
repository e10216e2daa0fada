package io.slidinglimiter.core;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The limits an application knows, by name, with their statistics. Decisions look their
 * definition up here each time, so a limit changed with {@link #updateLimit(String, long)}
 * applies on the next decision.
 */
public final class LimitRegistry {

    private final ConcurrentMap<String, Handle> handles = new ConcurrentHashMap<>();

    private final List<Consumer<LimitDefinition>> registrationListeners = new CopyOnWriteArrayList<>();

    private volatile boolean anyShadow;

    /**
     * Adds a definition, or checks that one of the same name counts the same way.
     * @param definition the definition
     * @return the definition registered under its name: the given one, or an equal earlier one
     * @throws IllegalStateException if a different definition has that name
     */
    public LimitDefinition register(LimitDefinition definition) {
        Handle registered = this.handles.putIfAbsent(definition.name(), new Handle(definition));
        if (registered != null && !registered.definition.equals(definition)) {
            throw new IllegalStateException("Limit '" + definition.name() + "' is defined twice, differently: "
                    + describe(registered.definition) + " and " + describe(definition));
        }
        if (registered == null) {
            this.registrationListeners.forEach((listener) -> listener.accept(definition));
        }
        return (registered != null) ? registered.definition : definition;
    }

    /**
     * Tells {@code listener} of every limit registered, now and later: for metrics that are
     * resolved once per limit.
     * @param listener told of each definition once
     */
    public void onRegistration(Consumer<LimitDefinition> listener) {
        this.registrationListeners.add(listener);
        all().forEach(listener);
    }

    /**
     * The definition of a name, if any.
     * @param name the limit's name
     * @return the definition
     */
    public Optional<LimitDefinition> find(String name) {
        Handle handle = this.handles.get(name);
        return (handle != null) ? Optional.of(handle.definition) : Optional.empty();
    }

    /**
     * The definition of a name.
     * @param name the limit's name
     * @return the definition
     * @throws IllegalArgumentException naming the known limits, if none has that name
     */
    public LimitDefinition get(String name) {
        return handle(name).definition;
    }

    /**
     * A limit's current definition and its statistics, in one look-up: for the decision path.
     * @param name the limit's name
     * @return its handle
     * @throws IllegalArgumentException naming the known limits, if none has that name
     */
    public Handle handle(String name) {
        Handle handle = this.handles.get(name);
        if (handle == null) {
            throw new IllegalArgumentException("No limit is named '" + name + "'; known limits: "
                    + this.handles.keySet().stream().sorted().toList());
        }
        return handle;
    }

    /**
     * The statistics of a registered limit.
     * @param name the limit's name
     * @return its statistics
     * @throws IllegalArgumentException if no limit has that name
     */
    public LimitStatistics statistics(String name) {
        return handle(name).statistics;
    }

    /**
     * Changes a limit's permits per window; its counters keep their counts.
     * @param name the limit's name
     * @param newLimit the new permits per window
     * @return the new definition
     */
    public LimitDefinition updateLimit(String name, long newLimit) {
        Handle handle = handle(name);
        synchronized (handle) {
            handle.definition = handle.definition.withLimit(newLimit);
            return handle.definition;
        }
    }

    /**
     * Replaces a limit's definition with one that counts another way (another window, number of
     * sub-windows or algorithm): its keys start afresh, as each backend finds counters of another
     * shape. A change of the permits alone is {@link #updateLimit}, which keeps the counts.
     * @param definition the new definition, under a registered name
     * @return the definition it replaced
     */
    public LimitDefinition redefine(LimitDefinition definition) {
        Handle handle = handle(definition.name());
        synchronized (handle) {
            LimitDefinition replaced = handle.definition;
            handle.definition = definition;
            return replaced;
        }
    }

    /**
     * Puts a limit in shadow mode, or takes it out: decided exactly as when enforcing, but never
     * rejecting a call (see {@code RateLimiters}).
     * @param name the limit's name
     * @param shadow whether the limit is in shadow mode
     */
    public void setShadow(String name, boolean shadow) {
        Handle handle = handle(name);
        synchronized (this) {
            handle.shadow = shadow;
            this.anyShadow = this.handles.values().stream().anyMatch((each) -> each.shadow);
        }
    }

    /**
     * Whether any limit is in shadow mode: one volatile read, so that decisions check their limits
     * one by one only while one is.
     * @return true when at least one limit is in shadow mode
     */
    public boolean hasShadowLimits() {
        return this.anyShadow;
    }

    /**
     * Whether a limit is in shadow mode.
     * @param name the limit's name
     * @return true when it never rejects
     */
    public boolean isShadow(String name) {
        Handle handle = this.handles.get(name);
        return handle != null && handle.shadow;
    }

    /**
     * Every definition.
     * @return the definitions, in no particular order
     */
    public Collection<LimitDefinition> all() {
        return this.handles.values().stream().map(Handle::definition).toList();
    }

    /** One registered limit: its current definition, which run-time changes replace, and its statistics. */
    public static final class Handle {

        private volatile LimitDefinition definition;

        private final LimitStatistics statistics = new LimitStatistics();

        private volatile boolean shadow;

        Handle(LimitDefinition definition) {
            this.definition = definition;
        }

        /** @return the current definition */
        public LimitDefinition definition() {
            return this.definition;
        }

        /** @return the limit's statistics */
        public LimitStatistics statistics() {
            return this.statistics;
        }

        /** @return whether the limit is in shadow mode: decided, never rejecting */
        public boolean isShadow() {
            return this.shadow;
        }

    }

    private static String describe(LimitDefinition definition) {
        return definition.limit() + " per " + definition.window() + " in " + definition.subWindows()
                + " sub-windows (" + definition.algorithm().id() + ")";
    }

}
