package io.slidinglimiter.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;

import io.slidinglimiter.Decision;

/**
 * A backend whose every decision is timed.
 * <p>
 * The nanoseconds each took go to {@code durations} (a
 * metrics timer, resolved once), and, when there is one, an {@link DecisionObserver} is told of it
 * around it.
 */
public class TimedBackend implements RateLimitBackend {

    private final RateLimitBackend delegate;

    private final LongConsumer durations;

    private final DecisionObserver observer;

    /**
     * Times a backend.
     * @param delegate the backend
     * @param durations receives the nanoseconds of each call
     */
    public TimedBackend(RateLimitBackend delegate, LongConsumer durations) {
        this(delegate, durations, null);
    }

    /**
     * Times and observes a backend.
     * @param delegate the backend
     * @param durations receives the nanoseconds of each call, or null not to time them
     * @param observer told of each decision, or null
     */
    public TimedBackend(RateLimitBackend delegate, LongConsumer durations, DecisionObserver observer) {
        this.delegate = delegate;
        this.durations = durations;
        this.observer = observer;
    }

    /** @return the backend timed */
    public RateLimitBackend delegate() {
        return this.delegate;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        Object observed = deciding(limit.name());
        long start = start();
        Decision decision;
        try {
            decision = this.delegate.tryAcquire(limit, key, cost);
        }
        catch (RuntimeException | Error ex) {
            decided(observed, start, null, ex);
            throw ex;
        }
        decided(observed, start, decision.allowed(), null);
        return decision;
    }

    @Override
    public boolean admit(LimitDefinition limit, String key, long cost) {
        Object observed = deciding(limit.name());
        long start = start();
        boolean allowed;
        try {
            allowed = this.delegate.admit(limit, key, cost);
        }
        catch (RuntimeException | Error ex) {
            decided(observed, start, null, ex);
            throw ex;
        }
        decided(observed, start, allowed, null);
        return allowed;
    }

    @Override
    public Decision acquireOrReject(LimitDefinition limit, String key, long cost) {
        Object observed = deciding(limit.name());
        long start = start();
        Decision rejection;
        try {
            rejection = this.delegate.acquireOrReject(limit, key, cost);
        }
        catch (RuntimeException | Error ex) {
            decided(observed, start, null, ex);
            throw ex;
        }
        decided(observed, start, rejection == null, null);
        return rejection;
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        Object observed = (this.observer != null) ? deciding(names(requests)) : null;
        long start = start();
        Decisions decisions;
        try {
            decisions = this.delegate.tryAcquireAll(requests);
        }
        catch (RuntimeException | Error ex) {
            decided(observed, start, null, ex);
            throw ex;
        }
        decided(observed, start, decisions.allowed(), null);
        return decisions;
    }

    /** What the observer keeps of a decision that starts, or null without one. */
    private Object deciding(String limitNames) {
        return (this.observer != null) ? this.observer.deciding(limitNames) : null;
    }

    /** Times a decision that ended, and tells the observer how: allowed or not, or what it threw. */
    private void decided(Object observed, long start, Boolean allowed, Throwable failure) {
        timed(start);
        if (this.observer != null) {
            this.observer.decided(observed, allowed, failure);
        }
    }

    /** When a decision starts, if decisions are timed; a clock read costs a local decision as much as the decision. */
    private long start() {
        return (this.durations != null) ? System.nanoTime() : 0;
    }

    private void timed(long start) {
        if (this.durations != null) {
            this.durations.accept(System.nanoTime() - start);
        }
    }

    private static String names(List<LimitRequest> requests) {
        if (requests.size() == 1) {
            return requests.get(0).limit().name();
        }
        StringBuilder names = new StringBuilder();
        for (LimitRequest request : requests) {
            names.append((names.length() > 0) ? "," : "").append(request.limit().name());
        }
        return names.toString();
    }

    @Override
    public void refund(List<LimitRequest> requests, Decisions taken) {
        this.delegate.refund(requests, taken);
    }

    @Override
    public void settle(List<LimitRequest> requests, Decisions taken, long[] charges) {
        this.delegate.settle(requests, taken, charges);
    }

    @Override
    public Decision peek(LimitDefinition limit, String key) {
        return this.delegate.peek(limit, key);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key) {
        return this.delegate.usage(limit, key);
    }

    @Override
    public KeyUsage usage(LimitDefinition limit, String key, long cost) {
        return this.delegate.usage(limit, key, cost);
    }

    @Override
    public void reset(LimitDefinition limit, String key) {
        this.delegate.reset(limit, key);
    }

    @Override
    public void resetAll() {
        this.delegate.resetAll();
    }

    @Override
    public boolean mayBlock() {
        return this.delegate.mayBlock();
    }

    @Override
    public boolean mayBlock(LimitDefinition limit) {
        return this.delegate.mayBlock(limit);
    }

    @Override
    public List<RateLimitBackend> parts() {
        List<RateLimitBackend> parts = new ArrayList<>();
        parts.add(this);
        parts.addAll(this.delegate.parts());
        return List.copyOf(parts);
    }

    @Override
    public long largestLimit(LimitDefinition limit) {
        return this.delegate.largestLimit(limit);
    }

    @Override
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        Object observed = (this.observer != null) ? this.observer.deciding(names(requests)) : null;
        long start = start();
        return this.delegate.tryAcquireAllAsync(requests, blocking).whenComplete((decisions, failure) -> {
            timed(start);
            if (this.observer != null) {
                this.observer.decided(observed, (decisions != null) ? decisions.allowed() : null, failure);
            }
        });
    }

    @Override
    public void close() {
        this.delegate.close();
    }

}
