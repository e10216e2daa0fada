/**
 * gRPC services served by Spring gRPC: {@link io.slidinglimiter.grpc.GrpcRateLimitInterceptor},
 * which applies {@code limiter.grpc.rules} by full method name, gives {@code @RateLimited} service
 * methods {@code #metadata} and {@code #clientAddress}, and answers every refusal with
 * {@code RESOURCE_EXHAUSTED} (or {@code INVALID_ARGUMENT} for a missing key), its
 * {@code google.rpc.RetryInfo} and the {@code ratelimit} trailers.
 * <p>
 * <b>API.</b> {@code GrpcRateLimitInterceptor}, {@code GrpcRateLimitContext}, {@code GrpcRule}.
 */
@NullMarked
package io.slidinglimiter.grpc;

import org.jspecify.annotations.NullMarked;
