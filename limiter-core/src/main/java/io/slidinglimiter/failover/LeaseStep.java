package io.slidinglimiter.failover;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;

/** What became of a call that the key's lease could not admit ({@link RemoteLeases#next}). */
public sealed interface LeaseStep permits LeaseStep.Granted, LeaseStep.NotGranted, LeaseStep.Waited {

    /**
     * This call took the key's next lease: the server decided it.
     *
     * @param decision the call's decision, its remaining counting the lease's permits as not used
     * @param decidedAtMillis the server's time of the decision
     */
    record Granted(Decision decision, long decidedAtMillis) implements LeaseStep {
    }

    /**
     * This call was to take the key's next lease, and the server failed it: the failure policy decides.
     *
     * @param failure what the server failed with
     */
    record NotGranted(RuntimeException failure) implements LeaseStep {
    }

    /**
     * This call waited for the lease another thread was taking.
     *
     * @param admitted the call's decisions, admitted from that lease; null when it brought nothing
     * for this call: decide on the server
     */
    record Waited(Decisions admitted) implements LeaseStep {
    }

}
