package io.slidinglimiter.failover;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.slidinglimiter.core.LimitDefinition;

/**
 * The service provider interface a remote backend implements so that {@link Leases} can take permits
 * from its server in batches.
 * <p>
 * Both operations count on the server, each in one round trip, at the server's time. A lease is
 * counted in the sub-window the server is in when it takes it; a give-back returns permits to that
 * sub-window only while the counter the lease came from is still there (not reset, not replaced by
 * another geometry), so that nothing is ever given back that was not taken from the same counter.
 */
public interface LeaseServer {

    /**
     * Takes a lease: the call's {@code cost} and up to {@code wanted - cost} permits more, counted on
     * the server at once in its current sub-window; at most half of what is left after the call, so
     * that a key near its limit is decided permit by permit. A lease the server takes after the
     * caller stopped waiting must change nothing, or be given back whole.
     * @param limit the limit, counted by the sliding window counter
     * @param key the counter key
     * @param cost the call's permits; 0 to top up a lease without a call
     * @param wanted the permits the instance expects to admit before the sub-window ends, the cost included
     * @param blocking null to wait on this thread (the stage returned is then complete); else where a
     * server client without an asynchronous API waits
     * @return the lease as the server took it, or a stage failed with the backend's exception
     */
    CompletionStage<LeaseGrant> lease(LimitDefinition limit, String key, long cost, long wanted, Executor blocking);

    /**
     * Gives a lease's unused permits back to the sub-window it was taken in, unless the counter was
     * reset or replaced since, or that sub-window left the window.
     * @param limit the limit the lease was taken under
     * @param key the counter key
     * @param grant the lease as the server took it
     * @param unused the permits it did not admit
     * @return done when the server took them back, failed when it did not answer
     */
    CompletionStage<?> giveBack(LimitDefinition limit, String key, LeaseGrant grant, long unused);

    /**
     * Where a top-up of a lease running low calls {@link #lease}, while the lease's calls go on being
     * admitted from what is left.
     * @return the calling thread (the default), for a backend whose {@link #lease} does not block it;
     * else an executor of the backend's own
     */
    default Executor topUps() {
        return Runnable::run;
    }

}
