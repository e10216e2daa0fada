package io.slidinglimiter.failover;

/**
 * A key's lease on this instance, as the endpoint shows it.
 *
 * @param held whether it holds one that can admit now
 * @param left its permits not yet admitted
 * @param taken the permits it took from the server, the taking call's cost and top-ups included
 * @param endsInMillis how long it may still admit
 */
public record LeaseState(boolean held, long left, long taken, long endsInMillis) {

    /** No lease held. */
    public static final LeaseState NONE = new LeaseState(false, 0, 0, 0);

}
