package io.slidinglimiter.failover;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;

/**
 * The service provider interface of a remote backend's leases: permits a busy key takes from the
 * server in batches, which {@link ResilientBackend} admits calls from without a round trip.
 */
public interface RemoteLeases extends AutoCloseable {

    /**
     * Whether a limit takes leases on this instance.
     * @param limit its definition in force
     * @return whether it does
     */
    boolean covers(LimitDefinition limit);

    /**
     * Admits a call from the key's live lease, without a round trip.
     * @param limit the limit, one that {@link #covers} says leases
     * @param key the counter key
     * @param cost the permits the call takes
     * @return the decision, or null when the lease cannot admit it (none held, ended, too few left)
     */
    Decisions admit(LimitDefinition limit, String key, long cost);

    /**
     * Takes the key's next lease for this call, or waits briefly for the one another thread takes.
     * @param limit the limit
     * @param key the counter key
     * @param cost the permits the call takes
     * @param sentAtMillis when the call was sent
     * @param blocking where to wait, or null to wait on this thread (the stage returned is then complete)
     * @return what this call came to, or null when it should be decided on the server as without leases
     */
    CompletionStage<LeaseStep> next(LimitDefinition limit, String key, long cost, long sentAtMillis,
            Executor blocking);

    /**
     * Notes that a call of a leasing limit was decided on the server as without leases.
     * @param limit the limit
     */
    void countOnServer(LimitDefinition limit);

    /**
     * Forgets a key's lease, whose counter was reset: what it holds is not given back.
     * @param limitName the limit's name
     * @param key the counter key
     */
    void forget(String limitName, String key);

    /** Forgets every lease: every counter was reset. */
    void forgetAll();

    /** Gives back what every lease holds and takes no more. */
    @Override
    void close();

    /** Gives back the leases that ended without traffic now: for tests that replay a schedule. */
    void sweep();

    /**
     * A limit's decisions with leases on this instance since start.
     * @param limitName the limit's name
     * @return its counts, zero when it never leased
     */
    LeaseCounts counts(String limitName);

    /**
     * A key's lease as this instance holds it now.
     * @param limitName the limit's name
     * @param key the counter key
     * @return its state; not held when it holds none
     */
    LeaseState state(String limitName, String key);

}
