package io.slidinglimiter.aop;

import java.util.List;

/**
 * The limits of one method, resolved once from its {@code @RateLimited} annotations.
 *
 * @param limits the limits, all of which must admit a call
 * @param parameterIndex the method's parameters by SpEL name ({@code userId}, {@code p0}, {@code a0})
 * @param subscribed how the method's result is subscribed to when its limits are decided then (a
 * {@code Mono}, a {@code Flux}, a Kotlin {@code suspend} function or {@code Flow}), or null when
 * they are decided when it is called
 * @param charged whether a limit settles the call's cost once it ended
 * @param stage whether the method returns a {@code CompletionStage} or {@code CompletableFuture}:
 * decided before it runs, a charge settled when the stage completes
 * @param denialFailsStage whether a denial is returned as a failed stage rather than thrown: a
 * stage-returning method not run by {@code @Async} (whose executor turns a throw into the failed
 * stage itself)
 */
record RateLimitedOperation(List<LimitOperation> limits, ParameterIndex parameterIndex,
        ReactiveCalls.Subscribed subscribed, boolean charged, boolean stage, boolean denialFailsStage) {

    public RateLimitedOperation {
        limits = List.copyOf(limits);
    }

    /**
     * Whether the limits are decided when the result is subscribed to.
     * @return whether the method's result is subscribed to
     */
    boolean reactive() {
        return this.subscribed != null;
    }

}
