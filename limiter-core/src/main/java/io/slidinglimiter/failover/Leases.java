package io.slidinglimiter.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Predicate;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.TimeSource;

/**
 * This instance's leases of a remote backend's keys.
 * <p>
 * Permits of hot keys taken from the server ({@link LeaseServer}) in batches and admitted here,
 * exactly, by any number of threads, until the batch is spent or its sub-window ends.
 * <ul>
 * <li>A lease's permits are counted on the server when it is taken, in the sub-window the server was in, so the
 * instances together never admit more than the limit in any window: a lease ends before its
 * sub-window does (by server time, measured on this instance's clock from when the call was sent, less
 * {@value #MARGIN_MILLIS} ms), and at most {@value #MAX_LEASE_MILLIS} ms after it was taken, so a
 * reset or a limit change made on another instance ends it by then.</li>
 * <li>What a lease did not admit is given back to its sub-window when it ends (by the next decision
 * for the key or by a sweep every {@value #SWEEP_MILLIS} ms), when the definition changes (a new
 * limit, a plan) and when the backend closes; never into a counter that was reset or replaced since.
 * A give-back that the server does not answer is lost: those permits stay counted until their
 * sub-window leaves the window (under-admission, never over).</li>
 * <li>Size: the call's cost plus what this instance's observed rate for the key would admit until the
 * lease ends; the server gives at most half of what is left after the call, so a key near its limit is
 * decided permit by permit, on the server.</li>
 * <li>One thread at a time takes a key's next lease, or tops up a lease with a quarter left in the
 * background; calls that find the lease spent meanwhile wait for it (without a thread, on the
 * asynchronous path) instead of a round trip of their own, and decide on the server when it brings
 * nothing for them.</li>
 * </ul>
 */
public final class Leases implements RemoteLeases {

    /** The longest a lease lives: a reset or a limit change made on another instance ends it by then. */
    public static final long MAX_LEASE_MILLIS = HeldLease.MAX_LEASE_MILLIS;

    /** A lease ends this much before its sub-window: the server rounds its time down, this clock may lag a tick. */
    public static final long MARGIN_MILLIS = HeldLease.MARGIN_MILLIS;

    /** How often leases that ended without traffic are given back. */
    static final long SWEEP_MILLIS = 50;

    private final LeaseServer server;

    private final TimeSource timeSource;

    private final Predicate<String> leased;

    private final int maxKeys;

    private final Map<Key, Holder> holders = new ConcurrentHashMap<>();

    private final LeaseLedger ledger = new LeaseLedger();

    private final ScheduledExecutorService sweeper;

    /** Once closed, no lease is taken: the instance is stopping. */
    private volatile boolean closed;

    private static final AtomicReferenceFieldUpdater<Holder, CompletableFuture> IN_FLIGHT = AtomicReferenceFieldUpdater
            .newUpdater(Holder.class, CompletableFuture.class, "inFlight");

    /**
     * @param server takes and gives back leases
     * @param timeSource this instance's clock
     * @param leased the names of the limits that lease
     * @param maxKeys the most keys holding a lease at once; others decide on the server
     * @param sweep whether a daemon thread gives back leases that ended without traffic (tests call
     * {@link #sweep()} instead)
     */
    public Leases(LeaseServer server, TimeSource timeSource, Predicate<String> leased, int maxKeys, boolean sweep) {
        this.server = server;
        this.timeSource = timeSource;
        this.leased = leased;
        this.maxKeys = maxKeys;
        this.sweeper = sweep ? Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(null, task, "sliding-limiter-leases", 0, false);
            thread.setDaemon(true);
            thread.setContextClassLoader(Leases.class.getClassLoader());
            return thread;
        }) : null;
        if (this.sweeper != null) {
            this.sweeper.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Whether a limit's decisions lease: it asked to, and counts by sliding window counter.
     * @param limit the definition in force
     * @return whether it leases
     */
    @Override
    public boolean covers(LimitDefinition limit) {
        return limit.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER && this.leased.test(limit.name());
    }

    /**
     * Admits a call from the key's lease, or answers null: no lease, spent, ended, or taken under
     * another definition (then given back).
     * @param limit the definition in force
     * @param key the counter key
     * @param cost the call's permits
     * @return the decision, at the server time the lease was taken (which a settle needs), or null to
     * decide on the server
     */
    @Override
    public Decisions admit(LimitDefinition limit, String key, long cost) {
        Holder holder = this.holders.get(new Key(limit.name(), key));
        HeldLease lease = (holder != null) ? holder.lease : null;
        if (lease == null) {
            return null;
        }
        long nowMillis = this.timeSource.currentTimeMillis();
        if (nowMillis >= lease.validUntilMillis || (lease.definition != limit && !lease.definition.equals(limit))) {
            end(holder, lease);
            return null;
        }
        long left;
        do {
            left = lease.left.get();
            if (left < cost) {
                return null;
            }
        }
        while (!lease.left.compareAndSet(left, left - cost));
        if (this.timeSource.currentTimeMillis() >= lease.validUntilMillis) {
            // Taken as the lease ended: not admitted from it (should the sweep have given the rest back
            // meanwhile, these permits stay counted: under-admission, never over).
            lease.left.addAndGet(cost);
            end(holder, lease);
            return null;
        }
        holder.statistics.fromLease.increment();
        // Read before a top-up changes what the server said (a top-up that lands meanwhile lowers it first and
        // adds to what is left after: the remaining shown is low for that instant, never high).
        Decisions admitted = new Decisions(true, List.of(new Decision(true, limit.limit(),
                lease.serverRemaining + left - cost, 0, Math.max(0, lease.resetAtMillis - nowMillis))),
                lease.grant.decidedAtMillis());
        if (left - cost < lease.lowWater && holder.inFlight == null) {
            topUp(holder, lease, limit, key);
        }
        return admitted;
    }

    /**
     * The lease side of a call that the key's lease could not admit (past the denial cache and the
     * breaker): this thread takes the key's next lease from the server, or, while another thread takes
     * it, the call waits for that one and is admitted from it. One path for both kinds of caller:
     * with {@code blocking} null everything happens on this thread, and the stage returned is
     * complete; otherwise nothing blocks a thread.
     * @param limit the definition in force
     * @param key the counter key
     * @param cost the call's permits
     * @param sentAtMillis when the call started, on this instance's clock
     * @param blocking null to call the server and wait on this thread; else where a runner without an
     * asynchronous API waits
     * @return what became of the call; null when neither applies (another thread is taking nothing
     * and this one cannot take, e.g. too many keys hold leases): decide on the server as without leases
     */
    @Override
    public CompletionStage<LeaseStep> next(LimitDefinition limit, String key, long cost, long sentAtMillis,
            Executor blocking) {
        Holder holder = claim(limit, key);
        if (holder != null) {
            CompletionStage<LeaseGrant> grant;
            try {
                grant = this.server.lease(limit, key, cost, wanted(holder, limit, cost), blocking);
            }
            catch (RuntimeException ex) {
                grant = CompletableFuture.failedFuture(ex);
            }
            return grant.handle((granted, failure) -> {
                if (failure != null) {
                    released(holder);
                    return new LeaseStep.NotGranted(RemoteBackendException.thrown(failure));
                }
                return new LeaseStep.Granted(install(holder, limit, key, granted, cost, sentAtMillis),
                        granted.decidedAtMillis());
            });
        }
        Holder taking = this.holders.get(new Key(limit.name(), key));
        CompletableFuture<Void> inFlight = (taking != null) ? taking.inFlight : null;
        if (inFlight == null) {
            return null;
        }
        if (blocking == null) {
            // Another thread's lease, which its runner's wait bounds.
            awaitAll(List.of(inFlight));
            return CompletableFuture.completedFuture(new LeaseStep.Waited(admit(limit, key, cost)));
        }
        return inFlight.handle((ignored, failure) -> new LeaseStep.Waited(admit(limit, key, cost)));
    }

    /**
     * Claims the taking of a key's next lease for this thread.
     * @return the holder, or null when another thread is taking one, or too many keys hold leases
     */
    private Holder claim(LimitDefinition limit, String key) {
        if (this.closed) {
            return null;
        }
        Key id = new Key(limit.name(), key);
        Holder holder = this.holders.get(id);
        if (holder == null) {
            if (this.holders.size() >= this.maxKeys) {
                return null;
            }
            holder = this.holders.computeIfAbsent(id, (ignored) -> new Holder(id, this.ledger.of(limit.name()),
                    this.timeSource.currentTimeMillis()));
        }
        return IN_FLIGHT.compareAndSet(holder, null, new CompletableFuture<Void>()) ? holder : null;
    }

    /** The permits to ask the server for, the call's cost included; at least {@code cost}. */
    private long wanted(Holder holder, LimitDefinition limit, long cost) {
        HeldLease previous = holder.lease;
        return (previous != null) ? previous.nextSize(limit, cost, this.timeSource.currentTimeMillis()) : cost;
    }

    /**
     * Installs what the server gave: the previous lease's rest is given back, the new one serves calls.
     * The claim is released.
     * @return the call's decision, its remaining counting the lease's permits as not used
     */
    private Decision install(Holder holder, LimitDefinition limit, String key, LeaseGrant grant, long cost,
            long sentAtMillis) {
        holder.statistics.fromServer.increment();
        Decision decision = grant.decision();
        if (!decision.allowed()) {
            endCurrent(holder);
        }
        else {
            long spare = grant.taken() - cost;
            replace(holder, limit, key, grant, spare, sentAtMillis);
            if (spare > 0) {
                holder.statistics.leasesTaken.increment();
                decision = new Decision(true, decision.limit(), decision.remaining() + spare, 0,
                        decision.resetAfterMillis());
            }
        }
        released(holder);
        return decision;
    }

    /**
     * Takes more permits for a lease running low, in the background, while its calls go on being
     * admitted from what is left: permits taken in the lease's sub-window join it; taken in the next
     * one, they are the key's next lease. Calls that find the lease spent meanwhile wait for it.
     */
    private void topUp(Holder holder, HeldLease lease, LimitDefinition limit, String key) {
        if (this.closed || !IN_FLIGHT.compareAndSet(holder, null, new CompletableFuture<Void>())) {
            return;
        }
        long wanted = wanted(holder, limit, 0);
        if (wanted <= 0) {
            released(holder);
            return;
        }
        long sentAtMillis = this.timeSource.currentTimeMillis();
        CompletionStage<LeaseGrant> grant;
        try {
            grant = this.server.lease(limit, key, 0, wanted, this.server.topUps());
        }
        catch (RuntimeException ex) {
            released(holder);
            return;
        }
        grant.whenComplete((taken, failure) -> {
            try {
                if (failure == null && taken.decision().allowed() && taken.taken() > 0) {
                    toppedUp(holder, lease, limit, key, taken, sentAtMillis);
                }
            }
            finally {
                released(holder);
            }
        });
    }

    private void toppedUp(Holder holder, HeldLease lease, LimitDefinition limit, String key, LeaseGrant grant,
            long sentAtMillis) {
        holder.statistics.leasesTaken.increment();
        if (holder.lease == lease && lease.joins(grant, limit, this.timeSource.currentTimeMillis())) {
            return;
        }
        replace(holder, limit, key, grant, grant.taken(), sentAtMillis);
    }

    /** The key's next lease: what the current one did not admit is given back. */
    private void replace(Holder holder, LimitDefinition limit, String key, LeaseGrant grant, long spare,
            long sentAtMillis) {
        endCurrent(holder);
        holder.lease = new HeldLease(limit, key, grant, spare, HeldLease.validUntil(grant, sentAtMillis),
                grant.decision().remaining(), sentAtMillis + grant.decision().resetAfterMillis(), sentAtMillis);
    }

    private void endCurrent(Holder holder) {
        HeldLease current = holder.lease;
        if (current != null) {
            end(holder, current);
        }
    }

    /**
     * Ends the taking of a key's next lease. What it brought once this instance closed is given back at
     * once: close() gives back what had landed, and stops waiting for the rest after a lease's lifetime.
     */
    private void released(Holder holder) {
        if (this.closed) {
            endCurrent(holder);
        }
        CompletableFuture<Void> inFlight = holder.inFlight;
        holder.inFlight = null;
        inFlight.complete(null);
    }

    /**
     * Counts a decision of a leasing limit that the server took as without leases.
     * @param limit the limit
     */
    @Override
    public void countOnServer(LimitDefinition limit) {
        this.ledger.of(limit.name()).fromServer.increment();
    }

    /**
     * Ends a lease once, giving back what it did not admit.
     * @return when the server took it back, or failed to (counted as given back or lost); done at once
     * when there was nothing to give back
     */
    private CompletableFuture<?> end(Holder holder, HeldLease lease) {
        long unused = lease.left.getAndSet(0);
        if (unused <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        lease.returned = unused;
        LeaseStatistics statistics = holder.statistics;
        try {
            return this.server.giveBack(lease.definition, lease.key, lease.grant, unused).toCompletableFuture()
                    .whenComplete((reply, failure) -> {
                        if (failure == null) {
                            statistics.givenBack.add(unused);
                        }
                        else {
                            statistics.lost.add(unused);
                        }
                    });
        }
        catch (RuntimeException ex) {
            statistics.lost.add(unused);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Gives back the leases that ended without traffic, and forgets keys idle for longer than a lease. */
    @Override
    public void sweep() {
        long nowMillis = this.timeSource.currentTimeMillis();
        for (Holder holder : this.holders.values()) {
            HeldLease lease = holder.lease;
            if (lease != null && nowMillis >= lease.validUntilMillis) {
                end(holder, lease);
            }
            long lastMillis = (lease != null) ? lease.sentAtMillis : holder.createdAtMillis;
            if (nowMillis - lastMillis > 2 * MAX_LEASE_MILLIS && holder.inFlight == null) {
                this.holders.remove(holder.key, holder);
            }
        }
    }

    /**
     * Ends a key's lease without giving anything back: the key was reset.
     * @param limitName the limit's name
     * @param key the counter key
     */
    @Override
    public void forget(String limitName, String key) {
        Holder holder = this.holders.remove(new Key(limitName, key));
        if (holder != null && holder.lease != null) {
            holder.lease.left.set(0);
        }
    }

    /** Ends every lease without giving anything back: every counter was reset. */
    @Override
    public void forgetAll() {
        for (Holder holder : List.copyOf(this.holders.values())) {
            forget(holder.key.limitName(), holder.key.key());
        }
    }

    /**
     * A key's lease as this instance holds it now.
     * @param limitName the limit's name
     * @param key the counter key
     * @return its state; not held when it holds none
     */
    @Override
    public LeaseState state(String limitName, String key) {
        Holder holder = this.holders.get(new Key(limitName, key));
        HeldLease lease = (holder != null) ? holder.lease : null;
        long nowMillis = this.timeSource.currentTimeMillis();
        if (lease == null || nowMillis >= lease.validUntilMillis || lease.left.get() <= 0) {
            return LeaseState.NONE;
        }
        return new LeaseState(true, lease.left.get(), lease.permits,
                lease.validUntilMillis - nowMillis);
    }

    /**
     * A limit's lease counts since start.
     * @param limitName the limit's name
     * @return its counts, zero when it never leased
     */
    @Override
    public LeaseCounts counts(String limitName) {
        return this.ledger.counts(limitName);
    }

    /**
     * Gives back every lease's rest, waiting at most a lease's lifetime for the leases being taken and as
     * long again for the server to take the rest back: an instance that stops leaves nothing counted
     * that it did not admit.
     */
    @Override
    public void close() {
        this.closed = true;
        if (this.sweeper != null) {
            this.sweeper.shutdownNow();
        }
        // Leases on their way land first (a slow server, a busy host): their permits are given back with the rest.
        awaitAll(this.holders.values().stream().map((holder) -> holder.inFlight).filter(Objects::nonNull).toList());
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (Holder holder : this.holders.values()) {
            HeldLease lease = holder.lease;
            if (lease != null) {
                pending.add(end(holder, lease));
            }
        }
        awaitAll(pending);
    }

    /** Waits at most a lease's lifetime for the server's replies. */
    private static void awaitAll(List<? extends CompletableFuture<?>> replies) {
        try {
            CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(MAX_LEASE_MILLIS,
                    TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (ExecutionException | TimeoutException ex) {
            // Best effort: what the server did not take back stays counted until its sub-window leaves the window.
        }
    }

    private record Key(String limitName, String key) {
    }

    /** One key's lease, and what its next one is sized from. */
    static final class Holder {

        private final Key key;

        private final LeaseStatistics statistics;

        private final long createdAtMillis;

        /** Set by the thread taking the next lease, completed when it is taken (or not). */
        private volatile CompletableFuture<Void> inFlight;

        private volatile HeldLease lease;

        private Holder(Key key, LeaseStatistics statistics, long createdAtMillis) {
            this.key = key;
            this.statistics = statistics;
            this.createdAtMillis = createdAtMillis;
        }

    }

}
