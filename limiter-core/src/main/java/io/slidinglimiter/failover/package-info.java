/**
 * The failover every remote backend shares: what a decision does when the server behind it fails.
 * <p>
 * <b>API.</b> {@link io.slidinglimiter.failover.ResilientBackend} (what applications use: the
 * failure policy, breakers per shard, the denial cache, reports of fallback admissions, leases),
 * {@link io.slidinglimiter.failover.FailoverStatus} (what it tells of itself) and
 * {@link io.slidinglimiter.failover.FailurePolicy}. A backend that decides on a server implements
 * the service provider interface {@link io.slidinglimiter.failover.RemoteBackend}, and for leases
 * {@link io.slidinglimiter.failover.LeaseServer} (then {@link io.slidinglimiter.failover.Leases}, a
 * {@link io.slidinglimiter.failover.RemoteLeases}, does the rest: {@code LeaseGrant},
 * {@code LeaseCounts}, {@code LeaseState}); its failures may implement
 * {@link io.slidinglimiter.failover.LateFailure} and {@link io.slidinglimiter.failover.ShardFailure},
 * or extend {@link io.slidinglimiter.failover.RemoteBackendException}. Everything else is
 * package-private.
 * <p>
 * <b>Rooms.</b> A decision walks down: {@code ResilientBackend} (denial cache, leases) to
 * {@code ShardBreakers} and {@code CircuitBreaker}, then the remote backend; its outcome goes to
 * {@code CallOutcomes} ({@code Outage}, {@code SlowCalls}, {@code UnreportedAdmissions}), a failure
 * to {@code FailurePolicies} ({@code LastKnownUsage}); several limits go through
 * {@code SeveralLimits}. A leasing limit's calls go to {@code Leases} first ({@code HeldLease},
 * {@code LeaseLedger}), which takes and gives back through the backend's {@code LeaseServer}. No type
 * here names a server: the remote backend tells what its failures
 * mean.
 */
@NullMarked
package io.slidinglimiter.failover;

import org.jspecify.annotations.NullMarked;
