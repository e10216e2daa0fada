package io.slidinglimiter.core;

import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import java.util.function.Consumer;


/**
 * The limits an application knows, by name, with their statistics. Decisions look their
 * definition up here each time, so a limit changed with {@link #updateLimit(String, long)}
 * applies on the next decision.
 */
public final class LimitRegistry {

    /** java.util.logging: the core needs no logging library (Spring Boot routes it to the application's). */
    private static final Logger logger = Logger.getLogger(LimitRegistry.class.getName());

    /** The most limits found without a map look-up. */
    private static final int MAX_NEAR = 8;

    private final ConcurrentMap<String, Handle> handles = new ConcurrentHashMap<>();

    /**
     * The first {@value #MAX_NEAR} limits registered, also in {@link #handles}: found by the identity
     * of their interned name, without a map look-up. Copied on write; limits are never removed.
     */
    private volatile Handle[] near = new Handle[0];

    private final List<Consumer<LimitDefinition>> registrationListeners = new CopyOnWriteArrayList<>();

    private volatile boolean anyShadow;

    /**
     * Adds a definition, or checks that one of the same name counts the same way.
     * @param definition the definition
     * @return the definition registered under its name: the given one, or an equal earlier one
     * @throws IllegalStateException if a different definition has that name
     */
    public LimitDefinition register(LimitDefinition definition) {
        // Interned, the name is the very string a caller writes as a literal or in an annotation, so
        // that a look-up by name usually ends at a reference comparison: with one of the first
        // limits (the near ones), without a map look-up at all (BENCHMARKS.md, third and fifth passes).
        String name = definition.name().intern();
        Handle created = new Handle(name, definition);
        Handle registered = this.handles.putIfAbsent(name, created);
        if (registered != null && !registered.definition().equals(definition)) {
            throw new IllegalStateException("Limit '" + definition.name() + "' is defined twice, differently: "
                    + describe(registered.definition()) + " and " + describe(definition));
        }
        if (registered == null) {
            keepNear(created);
            this.registrationListeners.forEach((listener) -> listener.accept(definition));
        }
        return (registered != null) ? registered.definition() : definition;
    }

    private synchronized void keepNear(Handle handle) {
        Handle[] near = this.near;
        if (near.length < MAX_NEAR) {
            Handle[] more = Arrays.copyOf(near, near.length + 1);
            more[near.length] = handle;
            this.near = more;
        }
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
        return (handle != null) ? Optional.of(handle.definition()) : Optional.empty();
    }

    /**
     * The definition of a name.
     * @param name the limit's name
     * @return the definition
     * @throws IllegalArgumentException naming the known limits, if none has that name
     */
    public LimitDefinition get(String name) {
        return handle(name).definition();
    }

    /**
     * A limit's current definition and its statistics, in one look-up: for the decision path.
     * @param name the limit's name
     * @return its handle
     * @throws IllegalArgumentException naming the known limits, if none has that name
     */
    public Handle handle(String name) {
        for (Handle near : this.near) {
            if (near.name == name) {
                return near;
            }
        }
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
            LimitDefinition changed = handle.definition().withLimit(newLimit);
            handle.state = new State(changed, handle.state.planLimits);
            return changed;
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
            LimitDefinition replaced = handle.definition();
            handle.state = new State(definition, handle.state.planLimits);
            return replaced;
        }
    }

    /**
     * Gives a limit's callers on other plans other quotas: the same window, algorithm and counters,
     * compared with the plan's permits per window. Replaces the plans it had.
     * @param name the limit's name
     * @param plans permits per window by plan name; empty for none
     * @throws InvalidLimitException for a plan whose limit is not greater than 0
     * @throws IllegalArgumentException for a blank plan name
     */
    public void setPlans(String name, Map<String, Long> plans) {
        Handle handle = handle(name);
        for (Map.Entry<String, Long> plan : plans.entrySet()) {
            if (plan.getKey() == null || plan.getKey().isBlank()) {
                throw new IllegalArgumentException("Limit '" + name + "': a plan needs a name");
            }
            if (plan.getValue() == null || plan.getValue() <= 0) {
                throw new InvalidLimitException(InvalidLimitException.Field.LIMIT, "Limit '" + name + "': plan '"
                        + plan.getKey() + "' must have a limit greater than 0 but had " + plan.getValue());
            }
        }
        synchronized (handle) {
            handle.state = new State(handle.definition(), Collections.unmodifiableMap(new TreeMap<>(plans)));
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

    /**
     * One registered limit: its current definition and its plans, which run-time changes replace,
     * and its statistics.
     */
    public static final class Handle {

        /** The most unknown plan names logged per limit: they come from callers' data. */
        private static final int MAX_UNKNOWN_PLANS_LOGGED = 100;

        private volatile State state;

        private final LimitStatistics statistics = new LimitStatistics();

        private volatile boolean shadow;

        private final Set<String> unknownPlansLogged = ConcurrentHashMap.newKeySet();

        /** The limit's name, interned: the registry's key. */
        private final String name;

        Handle(String name, LimitDefinition definition) {
            this.name = name;
            this.state = new State(definition, Map.of());
        }

        /** @return the current definition: the quota of callers on no plan */
        public LimitDefinition definition() {
            return this.state.definition;
        }

        /**
         * The definition a call on {@code plan} is decided with: the limit's own, with the plan's
         * permits per window. Null, blank or a plan the limit does not have: the limit's own
         * definition (an unknown plan is logged once, at WARN, with the plans there are).
         * @param plan the caller's plan, or null
         * @return the definition to decide with
         */
        public LimitDefinition definition(String plan) {
            State current = this.state;
            if (plan == null || plan.isBlank()) {
                return current.definition;
            }
            LimitDefinition planned = current.plans.get(plan);
            if (planned != null) {
                return planned;
            }
            if (this.unknownPlansLogged.size() < MAX_UNKNOWN_PLANS_LOGGED
                    && this.unknownPlansLogged.add(plan)) {
                logger.warning("Limit '" + current.definition.name() + "' has no plan '" + plan + "', so its own limit of "
                        + current.definition.limit() + " applies to callers on it; its plans are "
                        + current.planLimits.keySet() + ". Logged once per plan name.");
            }
            return current.definition;
        }

        /** @return permits per window by plan name, sorted by name; empty when the limit has no plans */
        public Map<String, Long> plans() {
            return this.state.planLimits;
        }

        /** @return the most permits per window a call may be compared with: the limit's own or a plan's */
        public long largestLimit() {
            State current = this.state;
            long largest = current.definition.limit();
            for (long planLimit : current.planLimits.values()) {
                largest = Math.max(largest, planLimit);
            }
            return largest;
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

    /**
     * A definition and its plans' definitions, replaced together so that a decision never sees a
     * plan of another window.
     */
    private static final class State {

        private final LimitDefinition definition;

        private final Map<String, Long> planLimits;

        private final Map<String, LimitDefinition> plans;

        State(LimitDefinition definition, Map<String, Long> planLimits) {
            this.definition = definition;
            this.planLimits = planLimits;
            Map<String, LimitDefinition> plans = new HashMap<>();
            planLimits.forEach((plan, limit) -> plans.put(plan, definition.withLimit(limit)));
            this.plans = Map.copyOf(plans);
        }

    }

    private static String describe(LimitDefinition definition) {
        return definition.limit() + " per " + definition.window() + " in " + definition.subWindows()
                + " sub-windows (" + definition.algorithm().id() + ")";
    }

}
