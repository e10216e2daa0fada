package io.slidinglimiter.core;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;

import io.slidinglimiter.Decision;

/**
 * A backend whose every call is timed: the nanoseconds each took go to {@code durations} (a
 * metrics timer, resolved once).
 */
public class TimedBackend implements RateLimitBackend {

    private final RateLimitBackend delegate;

    private final LongConsumer durations;

    /**
     * Times a backend.
     * @param delegate the backend
     * @param durations receives the nanoseconds of each call
     */
    public TimedBackend(RateLimitBackend delegate, LongConsumer durations) {
        this.delegate = delegate;
        this.durations = durations;
    }

    /** @return the backend timed */
    public RateLimitBackend delegate() {
        return this.delegate;
    }

    @Override
    public Decision tryAcquire(LimitDefinition limit, String key, long cost) {
        long start = System.nanoTime();
        try {
            return this.delegate.tryAcquire(limit, key, cost);
        }
        finally {
            this.durations.accept(System.nanoTime() - start);
        }
    }

    @Override
    public Decisions tryAcquireAll(List<LimitRequest> requests) {
        long start = System.nanoTime();
        try {
            return this.delegate.tryAcquireAll(requests);
        }
        finally {
            this.durations.accept(System.nanoTime() - start);
        }
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
    public CompletionStage<Decisions> tryAcquireAllAsync(List<LimitRequest> requests, Executor blocking) {
        long start = System.nanoTime();
        return this.delegate.tryAcquireAllAsync(requests, blocking)
                .whenComplete((decisions, failure) -> this.durations.accept(System.nanoTime() - start));
    }

    @Override
    public void close() {
        this.delegate.close();
    }

}
