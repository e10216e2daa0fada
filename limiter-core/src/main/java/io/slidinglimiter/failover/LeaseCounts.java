package io.slidinglimiter.failover;

/**
 * A limit's decisions with leases on this instance, since start.
 *
 * @param fromLease calls admitted from a lease, without a round trip
 * @param fromServer calls decided on the server (the ones that took a lease among them)
 * @param leasesTaken leases taken with permits to spare
 * @param givenBack permits given back unused
 * @param lost permits that could not be given back (the server did not answer): counted until their
 * sub-window leaves the window
 */
public record LeaseCounts(long fromLease, long fromServer, long leasesTaken, long givenBack, long lost) {

    /** A limit that never leased. */
    public static final LeaseCounts NONE = new LeaseCounts(0, 0, 0, 0, 0);

}
