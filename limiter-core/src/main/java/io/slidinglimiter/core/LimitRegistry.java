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

    private final ConcurrentMap<String, LimitDefinition> definitions = new ConcurrentHashMap<>();

    private final ConcurrentMap<String, LimitStatistics> statistics = new ConcurrentHashMap<>();

    private final List<Consumer<LimitDefinition>> registrationListeners = new CopyOnWriteArrayList<>();

    /**
     * Adds a definition, or checks that one of the same name counts the same way.
     * @param definition the definition
     * @return the definition registered under its name: the given one, or an equal earlier one
     * @throws IllegalStateException if a different definition has that name
     */
    public LimitDefinition register(LimitDefinition definition) {
        LimitDefinition registered = this.definitions.putIfAbsent(definition.name(), definition);
        if (registered != null && !registered.equals(definition)) {
            throw new IllegalStateException("Limit '" + definition.name() + "' is defined twice, differently: "
                    + describe(registered) + " and " + describe(definition));
        }
        if (registered == null) {
            this.statistics.computeIfAbsent(definition.name(), (name) -> new LimitStatistics());
            this.registrationListeners.forEach((listener) -> listener.accept(definition));
        }
        return (registered != null) ? registered : definition;
    }

    /**
     * Tells {@code listener} of every limit registered, now and later: for metrics that are
     * resolved once per limit.
     * @param listener told of each definition once
     */
    public void onRegistration(Consumer<LimitDefinition> listener) {
        this.registrationListeners.add(listener);
        this.definitions.values().forEach(listener);
    }

    /**
     * The definition of a name, if any.
     * @param name the limit's name
     * @return the definition
     */
    public Optional<LimitDefinition> find(String name) {
        return Optional.ofNullable(this.definitions.get(name));
    }

    /**
     * The definition of a name.
     * @param name the limit's name
     * @return the definition
     * @throws IllegalArgumentException naming the known limits, if none has that name
     */
    public LimitDefinition get(String name) {
        LimitDefinition definition = this.definitions.get(name);
        if (definition == null) {
            throw new IllegalArgumentException("No limit is named '" + name + "'; known limits: "
                    + this.definitions.keySet().stream().sorted().toList());
        }
        return definition;
    }

    /**
     * The statistics of a registered limit.
     * @param name the limit's name
     * @return its statistics
     * @throws IllegalArgumentException if no limit has that name
     */
    public LimitStatistics statistics(String name) {
        LimitStatistics found = this.statistics.get(name);
        if (found == null) {
            get(name);
        }
        return found;
    }

    /**
     * Changes a limit's permits per window; its counters keep their counts.
     * @param name the limit's name
     * @param newLimit the new permits per window
     * @return the new definition
     */
    public LimitDefinition updateLimit(String name, long newLimit) {
        get(name);
        return this.definitions.computeIfPresent(name, (ignored, current) -> current.withLimit(newLimit));
    }

    /**
     * Every definition.
     * @return the definitions, in no particular order
     */
    public Collection<LimitDefinition> all() {
        return this.definitions.values();
    }

    private static String describe(LimitDefinition definition) {
        return definition.limit() + " per " + definition.window() + " in " + definition.subWindows()
                + " sub-windows (" + definition.algorithm().id() + ")";
    }

}
