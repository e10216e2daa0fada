package io.slidinglimiter.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.slidinglimiter.Decision;
import io.slidinglimiter.internal.SplitDecision;

/**
 * Sends each limit to the backend that holds its counters: a named limit to its own backend, any
 * other to the default. A call whose limits live in several backends is decided backend by backend
 * in the order given (put the cheapest first), refunding the earlier ones when a later one rejects;
 * see {@link SplitDecision}.
 * <pre>{@code
 * RateLimitBackend backend = new RoutingBackend(List.of(local, redis), redis, Map.of("login", local));
 * }</pre>
 * Backends chosen by name ({@link NamedBackend}) are routed by {@link #byName}.
 */
public class RoutingBackend implements RateLimitBackend {

    private final List<RateLimitBackend> order;

    private final RateLimitBackend defaultBackend;

    private final Map<String, RateLimitBackend> byLimitName;

    /**
     * Creates the router.
     * @param order every backend, in the order a split call decides them
     * @param defaultBackend the backend of limits not named in {@code byLimitName}
     * @param byLimitName the backend of each limit that chose its own
     */
    public RoutingBackend(List<RateLimitBackend> order, RateLimitBackend defaultBackend,
            Map<String, RateLimitBackend> byLimitName) {
        this.order = List.copyOf(order);
        this.defaultBackend = defaultBackend;
        this.byLimitName = Map.copyOf(byLimitName);
        if (!this.order.contains(defaultBackend) || !this.order.containsAll(this.byLimitName.values())) {
            throw new IllegalArgumentException("Every backend must be in the decision order");
        }
    }

    /**
     * The backend of limits that choose their backends by name.
     * @param backends the backends by name, in the order a call whose limits live in several is
     * decided (put the cheapest first)
     * @param defaultName the backend of limits that choose none
     * @param byLimitName the backend each limit that chose its own named
     * @return the one backend every limit uses, or a router among those used
     * @throws IllegalArgumentException naming a backend that is not among {@code backends}, with
     * those that are
     */
    public static RateLimitBackend byName(Map<String, RateLimitBackend> backends, String defaultName,
            Map<String, String> byLimitName) {
        Set<String> used = new LinkedHashSet<>();
        used.add(defaultName);
        used.addAll(byLimitName.values());
        for (String name : used) {
            if (!backends.containsKey(name)) {
                throw new IllegalArgumentException("No backend is named '" + name + "': the backends are "
                        + String.join(", ", backends.keySet()));
            }
        }
        if (used.size() == 1) {
            return backends.get(defaultName);
        }
        List<RateLimitBackend> order = new ArrayList<>();
        backends.forEach((name, backend) -> {
            if (used.contains(name)) {
                order.add(backend);
            }
        });
        Map<String, RateLimitBackend> routes = new HashMap<>();
        byLimitName.forEach((limit, name) -> routes.put(limit, backends.get(name)));
        return new RoutingBackend(order, backends.get(defaultName), routes);
    }

    /**
     * The backend that holds a limit's counters.
     * @param limit the limit
     * @return its backend
     */
    public RateLimitBackend backendFor(LimitDefinition limit) {
        return this.byLimitName.getOrDefault(limit.name(), this.defaultBackend);
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        return backendFor(limit).tryAcquire(limit, key, cost);
    }

    @Override
    public boolean admit(LimitDefinition limit, String key, long cost) {
        return backendFor(limit).admit(limit, key, cost);
    }

    @Override
    public Decision acquireOrReject(LimitDefinition limit, String key, long cost) {
        return backendFor(limit).acquireOrReject(limit, key, cost);
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        List<RateLimitBackend> backends = new ArrayList<>();
        List<List<Integer>> groups = groups(requests, backends);
        if (groups.size() == 1) {
            return backends.get(0).tryAcquireAll(requests);
        }
        return SplitDecision.decide(requests, groups, new SplitDecision.Groups() {

            @Override
            public Decisions tryAcquireAll(int group, List<LimitRequest> selected) {
                return backends.get(group).tryAcquireAll(selected);
            }

            @Override
            public void refund(int group, List<LimitRequest> selected, Decisions taken) {
                backends.get(group).refund(selected, taken);
            }

        });
    }

    /**
     * {@inheritDoc}
     * <p>
     * Each backend gets back its own group, with the time at which it decided it (a Redis group by
     * Redis time, a local one by the local clock).
     */
    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        List<RateLimitBackend> backends = new ArrayList<>();
        List<List<Integer>> groups = groups(requests, backends);
        if (groups.size() == 1) {
            backends.get(0).refund(requests, taken);
            return;
        }
        checkParts(groups, taken);
        for (int g = 0; g < groups.size(); g++) {
            backends.get(g).refund(SplitDecision.select(requests, groups.get(g)), taken.parts().get(g));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Each backend settles its own group, with the time at which it decided it.
     */
    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        List<RateLimitBackend> backends = new ArrayList<>();
        List<List<Integer>> groups = groups(requests, backends);
        if (groups.size() == 1) {
            backends.get(0).settle(requests, taken, charges);
            return;
        }
        checkParts(groups, taken);
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> group = groups.get(g);
            backends.get(g).settle(SplitDecision.select(requests, group), taken.parts().get(g),
                    SplitDecision.select(charges, group));
        }
    }

    private static void checkParts(List<List<Integer>> groups, Decisions taken) {
        if (taken.parts().size() != groups.size()) {
            throw new IllegalArgumentException("Give back the decisions this backend returned for these requests: "
                    + groups.size() + " groups were decided, but the decisions have " + taken.parts().size()
                    + " parts");
        }
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return backendFor(limit).peek(limit, key);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        return backendFor(limit).usage(limit, key);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        return backendFor(limit).usage(limit, key, cost);
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        backendFor(limit).reset(limit, key);
    }

    /** Each backend once. */
    @Override
    public void resetAll() {
        this.order.forEach(RateLimitBackend::resetAll);
    }

    @Override
    public boolean mayBlock() {
        return this.order.stream().anyMatch(RateLimitBackend::mayBlock);
    }

    @Override
    public boolean mayBlock(LimitDefinition limit) {
        return backendFor(limit).mayBlock(limit);
    }

    @Override
    public List<RateLimitBackend> parts() {
        List<RateLimitBackend> parts = new ArrayList<>();
        parts.add(this);
        for (RateLimitBackend backend : this.order) {
            backend.parts().stream().filter((part) -> !parts.contains(part)).forEach(parts::add);
        }
        return List.copyOf(parts);
    }

    @Override
    public long largestLimit(LimitDefinition limit) {
        return backendFor(limit).largestLimit(limit);
    }

    /** Requests all on one backend go to its own asynchronous decision; a call across backends is split as usual. */
    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        RateLimitBackend first = backendFor(requests.get(0).limit());
        for (LimitRequest request : requests) {
            if (backendFor(request.limit()) != first) {
                return RateLimitBackend.super.tryAcquireAllAsync(requests, blocking);
            }
        }
        return first.tryAcquireAllAsync(requests, blocking);
    }

    @Override
    public void close() {
        this.order.forEach(RateLimitBackend::close);
    }

    /** Requests grouped by backend, in the decision order; {@code backends} receives each group's. */
    private List<List<Integer>> groups(List<LimitRequest> requests, List<RateLimitBackend> backends) {
        Map<RateLimitBackend, List<Integer>> byBackend = new IdentityHashMap<>();
        for (int i = 0; i < requests.size(); i++) {
            byBackend.computeIfAbsent(backendFor(requests.get(i).limit()), (backend) -> new ArrayList<>()).add(i);
        }
        List<List<Integer>> groups = new ArrayList<>(byBackend.size());
        for (RateLimitBackend backend : this.order) {
            List<Integer> group = byBackend.get(backend);
            if (group != null) {
                groups.add(group);
                backends.add(backend);
            }
        }
        return groups;
    }

}
