package io.slidinglimiter.aop;

import java.util.List;

/**
 * The limits of one method, resolved once from its {@code @RateLimited} annotations.
 *
 * @param limits the limits, all of which must admit a call
 * @param parameterIndex the method's parameters by SpEL name ({@code userId}, {@code p0}, {@code a0})
 * @param reactive whether the method returns a {@code Mono} or {@code Flux}, whose limits are
 * decided when it is subscribed to
 * @param charged whether a limit settles the call's cost once it ended
 * @param stage whether the method returns a {@code CompletionStage} or {@code CompletableFuture}:
 * decided before it runs, a charge settled when the stage completes
 * @param denialFailsStage whether a denial is returned as a failed stage rather than thrown: a
 * stage-returning method not run by {@code @Async} (whose executor turns a throw into the failed
 * stage itself)
 */
record RateLimitedOperation(List<LimitOperation> limits,
        ParameterIndex parameterIndex, boolean reactive, boolean charged, boolean stage, boolean denialFailsStage) {

    public RateLimitedOperation {
        limits = List.copyOf(limits);
    }

}
