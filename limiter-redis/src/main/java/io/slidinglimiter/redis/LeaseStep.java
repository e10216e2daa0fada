package io.slidinglimiter.redis;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Decisions;

/** What became of a call that the key's lease could not admit ({@link Leases#next}). */
sealed interface LeaseStep permits LeaseStep.Granted, LeaseStep.NotGranted, LeaseStep.Waited {

    /**
     * This call took the key's next lease: Redis decided it.
     *
     * @param decision the call's decision, its remaining counting the lease's permits as not used
     * @param decidedAtMillis the Redis time of the decision
     */
    record Granted(Decision decision, long decidedAtMillis) implements LeaseStep {
    }

    /**
     * This call was to take the key's next lease, and Redis failed it: the failure policy decides.
     *
     * @param failure what Redis failed with
     */
    record NotGranted(RuntimeException failure) implements LeaseStep {
    }

    /**
     * This call waited for the lease another thread was taking.
     *
     * @param admitted the call's decisions, admitted from that lease; null when it brought nothing
     * for this call: decide in Redis
     */
    record Waited(Decisions admitted) implements LeaseStep {
    }

}
