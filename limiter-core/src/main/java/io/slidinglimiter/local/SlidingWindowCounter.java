package io.slidinglimiter.local;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

import io.slidinglimiter.Decision;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.Algorithm;

/**
 * The sliding window counter: a window of {@code W} milliseconds cut into {@code N} slots of
 * {@code W/N}, aligned to absolute time ({@code slotStart = t - t % (W/N)}). Moving to a later slot
 * clears only the slots being reused; a jump of {@code N} slots or more clears all.
 * <p>
 * A permit counted in the slot starting at {@code s} is counted until {@code s + W}: the effective
 * window is between {@code W - W/N} and {@code W} long. {@code N = 1} is a fixed window.
 * <p>
 * <b>Without a lock within a slot.</b> The newest slot's count lives in an {@link Epoch} with the
 * sum of the older slots and the time the next slot starts. While time stays within the slot, an
 * admission is one compare-and-set of that count, and a rejection reads the older slots and checks
 * that no locked section began meanwhile. Everything else (moving to a later slot, all-or-nothing
 * decisions, refunds, resets) takes the monitor, first <em>seals</em> the epoch so that no
 * compare-and-set can succeed on it any more, and ends by publishing a new one. A sealed epoch is
 * never reopened, so a decision taken on an open one is exact.
 */
final class SlidingWindowCounter extends WindowCounter {

    private static final VarHandle CURRENT;

    static {
        try {
            CURRENT = MethodHandles.lookup().findVarHandle(Epoch.class, "current", long.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** {@link #decideOpen} could not decide without the monitor. */
    private static final long LOCKED = Long.MIN_VALUE;

    /** {@link #decideOpen} lost a compare-and-set to another admission: try again. */
    private static final long LOST_RACE = Long.MIN_VALUE + 1;

    /**
     * The spin-wait hints after a lost compare-and-set: about 0.6 µs on the machine of
     * BENCHMARKS.md (as good there as 64 or 1 024 of them), far below what a park costs.
     */
    private static final int LOST_RACE_SPINS = 32;

    /** The epoch of a retired counter: sealed for ever. */
    private static final Epoch RETIRED_EPOCH = new Epoch(Long.MIN_VALUE, 0, 0, -1);

    private final Geometry geometry;

    /**
     * The counts of the {@code N - 1} slots before the newest, slot {@code s} at {@code s mod (N - 1)};
     * written only under the monitor.
     */
    private final long[] older;

    private volatile Epoch epoch;

    /**
     * The last rejection made without the monitor, given again while nothing changed: immutable, so
     * a thread that reads it through a race reads it whole.
     */
    private Decision lastRejection;

    /**
     * Creates an empty counter.
     * @param windowMillis the window length, a multiple of {@code subWindows} milliseconds
     * @param subWindows the number of slots, 1 to {@value LimitDefinition#MAX_SUB_WINDOWS}
     * @param nowMillis the current time
     */
    public SlidingWindowCounter(long windowMillis, int subWindows, long nowMillis) {
        this(new Geometry(windowMillis, subWindows), nowMillis);
    }

    /**
     * Creates an empty counter of a shape shared with others: one limit's counters share one.
     * @param geometry the window and its slots
     * @param nowMillis the current time
     */
    SlidingWindowCounter(Geometry geometry, long nowMillis) {
        this.geometry = geometry;
        this.older = new long[geometry.slots - 1];
        long slot = Math.floorDiv(nowMillis, geometry.slotMillis);
        this.epoch = new Epoch((slot + 1) * geometry.slotMillis, 0, oldestIndex(slot), 0);
    }

    @Override
    public long windowMillis() {
        return this.geometry.windowMillis;
    }

    @Override
    public boolean countsFor(LimitDefinition definition) {
        return definition.algorithm() == Algorithm.SLIDING_WINDOW_COUNTER
                && definition.windowMillis() == windowMillis() && definition.subWindows() == this.geometry.slots;
    }

    /**
     * {@inheritDoc}
     * <p>
     * A rejection equal to the last one made without the monitor is that object again, so that a key
     * kept over its limit costs no allocation per call.
     */
    @Override
    public Decision tryAcquire(long nowMillis, long cost, long limit) {
        checkCost(cost, limit);
        boolean allowed;
        long remaining;
        long retryAfterMillis;
        long resetAfterMillis;
        while (true) {
            Epoch epoch = this.epoch;
            long current = epoch.current;
            // Every field of the epoch is read before the compare-and-set or the check that validates
            // the reads: a locked section that seals it may change them in place right after.
            long newestExpiry = newestExpiry(epoch);
            long outcome = decideOpen(epoch, current, nowMillis, cost, limit);
            if (outcome >= 0) {
                allowed = true;
                remaining = outcome;
                retryAfterMillis = 0;
                resetAfterMillis = newestExpiry - nowMillis;
                break;
            }
            if (outcome == LOCKED) {
                Decision locked = tryAcquireLocked(nowMillis, cost, limit);
                if (locked == null) {
                    return null;
                }
                allowed = locked.allowed();
                remaining = locked.remaining();
                retryAfterMillis = locked.retryAfterMillis();
                resetAfterMillis = locked.resetAfterMillis();
                break;
            }
            if (outcome != LOST_RACE) {
                resetAfterMillis = resetAfterMillis(epoch, current, nowMillis);
                remaining = Math.max(0, limit - epoch.older - current);
                if (stillOpen(epoch)) {
                    allowed = false;
                    retryAfterMillis = -outcome;
                    break;
                }
            }
        }
        resetAfterMillis = capped(resetAfterMillis);
        if (!allowed) {
            // A key over its limit is told the same thing until time or a call moves it: said once.
            Decision last = this.lastRejection;
            if (last != null && last.limit() == limit && last.remaining() == remaining
                    && last.retryAfterMillis() == retryAfterMillis && last.resetAfterMillis() == resetAfterMillis) {
                return last;
            }
            last = new Decision(false, limit, remaining, retryAfterMillis, resetAfterMillis);
            this.lastRejection = last;
            return last;
        }
        return new Decision(true, limit, remaining, retryAfterMillis, resetAfterMillis);
    }

    @Override
    public long acquire(long nowMillis, long cost, long limit) {
        checkCost(cost, limit);
        while (true) {
            Epoch epoch = this.epoch;
            long outcome = decideOpen(epoch, epoch.current, nowMillis, cost, limit);
            if (outcome == LOCKED) {
                return outcome(tryAcquireLocked(nowMillis, cost, limit));
            }
            if (outcome >= 0 || (outcome != LOST_RACE && stillOpen(epoch))) {
                return outcome;
            }
        }
    }

    /**
     * Decides on an open epoch without a lock, as {@link #acquire} answers: the permits remaining
     * when admitted; minus the wait when rejected (valid only if {@link #stillOpen} holds after it);
     * {@link #LOCKED} when only a locked section can decide (the epoch is sealed, or its slot has
     * ended); {@link #LOST_RACE} when another admission came first.
     */
    private long decideOpen(Epoch epoch, long current, long nowMillis, long cost, long limit) {
        if (current < 0 || nowMillis >= epoch.nextSlotStartMillis) {
            return LOCKED;
        }
        long used = epoch.older + current;
        if (used + cost > limit) {
            return -capped(retryAfterMillis(epoch, current, nowMillis, used + cost - limit));
        }
        return CURRENT.compareAndSet(epoch, current, current + cost) ? limit - used - cost : lostRace();
    }

    /**
     * Backs off before the retry of a lost compare-and-set: the thread that won is taking the same
     * key's next permit, and retrying at once only moves the count's cache line back and forth
     * between the two. Two threads on one key: 19 admissions per microsecond without the pause,
     * 27 to 29 with it (BENCHMARKS.md). The loser waits; nobody is admitted out of turn.
     */
    private static long lostRace() {
        for (int i = 0; i < LOST_RACE_SPINS; i++) {
            Thread.onSpinWait();
        }
        return LOST_RACE;
    }

    /** Whether no locked section has sealed {@code epoch} since the reads before this call. */
    private static boolean stillOpen(Epoch epoch) {
        VarHandle.acquireFence();
        return epoch.current >= 0;
    }

    private long capped(long millis) {
        return Math.min(millis, windowMillis());
    }

    // Under the monitor: the epoch is sealed, and its fields are the working state.

    @Override
    boolean retired() {
        return this.epoch == RETIRED_EPOCH;
    }

    @Override
    void retire() {
        this.epoch = RETIRED_EPOCH;
    }

    /**
     * {@inheritDoc}
     * <p>
     * After a reset, sealed until a locked section counts a permit (the first one notes its time,
     * which refunds compare with): admissions go through the monitor until then.
     */
    @Override
    void publish() {
        Epoch sealed = this.epoch;
        long count = sealed.count();
        this.epoch = new Epoch(sealed.nextSlotStartMillis, sealed.older, sealed.oldestIndex,
                awaitsFirstCount() ? -1 - count : count);
    }

    /** Seals the epoch (once per locked section) and moves it up to {@code nowMillis}. */
    @Override
    void advance(long nowMillis) {
        Epoch epoch = seal();
        if (nowMillis < epoch.nextSlotStartMillis) {
            // Still the newest slot, or an older time, which counts in it.
            return;
        }
        long steps = (nowMillis - epoch.nextSlotStartMillis) / this.geometry.slotMillis + 1;
        long current = epoch.count();
        if (steps >= this.geometry.slots) {
            Arrays.fill(this.older, 0);
            long slot = Math.floorDiv(nowMillis, this.geometry.slotMillis);
            epoch.older = 0;
            epoch.oldestIndex = oldestIndex(slot);
            epoch.nextSlotStartMillis = (slot + 1) * this.geometry.slotMillis;
            epoch.setSealedCount(0);
            return;
        }
        long older = epoch.older;
        int index = epoch.oldestIndex;
        for (long step = 0; step < steps; step++) {
            if (this.older.length > 0) {
                // The oldest slot leaves the window; the newest takes its place in the ring.
                older += current - this.older[index];
                this.older[index] = current;
                index = (index + 1 == this.older.length) ? 0 : index + 1;
            }
            current = 0;
        }
        epoch.older = older;
        epoch.oldestIndex = index;
        epoch.nextSlotStartMillis += steps * this.geometry.slotMillis;
        epoch.setSealedCount(current);
    }

    /**
     * Seals the epoch: from here on no compare-and-set succeeds on it, and a lock-free rejection that
     * read anything this locked section writes next fails {@link #stillOpen}.
     * <p>
     * The compare-and-set is a volatile write, which keeps earlier writes before it but lets later
     * plain writes (the ring, the epoch's fields) become visible before it. The store-store fence
     * after it forbids that, as {@code StampedLock} does after taking its write lock: a reader that
     * sees a write of this section, then its acquire fence, then {@code current}, sees the seal.
     */
    private Epoch seal() {
        Epoch epoch = this.epoch;
        while (true) {
            long current = epoch.current;
            if (current < 0) {
                return epoch;
            }
            if (CURRENT.compareAndSet(epoch, current, -1 - current)) {
                VarHandle.storeStoreFence();
                return epoch;
            }
        }
    }

    @Override
    long used() {
        Epoch epoch = this.epoch;
        return epoch.older + epoch.count();
    }

    @Override
    long retryAfterMillis(long nowMillis, long cost, long limit) {
        long excess = used() + cost - limit;
        if (excess <= 0) {
            return 0;
        }
        Epoch epoch = this.epoch;
        return retryAfterMillis(epoch, epoch.count(), nowMillis, excess);
    }

    /**
     * Slots leave the window oldest first: the time until the one whose departure frees
     * {@code excess} permits leaves. The oldest slot ends its window when the next slot starts.
     */
    private long retryAfterMillis(Epoch epoch, long current, long nowMillis, long excess) {
        if (epoch.older == 0) {
            // Everything counted is in the newest slot: a burst, the usual reason to be rejected.
            return newestExpiry(epoch) - nowMillis;
        }
        long freed = 0;
        long expiry = epoch.nextSlotStartMillis;
        int index = epoch.oldestIndex;
        for (int i = 0; i < this.older.length; i++) {
            freed += this.older[index];
            if (freed >= excess) {
                return expiry - nowMillis;
            }
            expiry += this.geometry.slotMillis;
            index = (index + 1 == this.older.length) ? 0 : index + 1;
        }
        // The newest slot: reached when it holds the permits needed (callers refuse cost > limit).
        return expiry - nowMillis;
    }

    @Override
    void add(long nowMillis, long cost) {
        Epoch epoch = this.epoch;
        epoch.setSealedCount(epoch.count() + cost);
    }

    @Override
    void remove(long acquiredAtMillis, long cost) {
        Epoch epoch = this.epoch;
        long newest = epoch.nextSlotStartMillis / this.geometry.slotMillis - 1;
        long slot = Math.floorDiv(acquiredAtMillis, this.geometry.slotMillis);
        if (slot == newest) {
            epoch.setSealedCount(epoch.count() - Math.min(cost, epoch.count()));
        }
        else if (slot < newest && slot > newest - this.geometry.slots) {
            int index = (int) Math.floorMod(slot, (long) this.older.length);
            long taken = Math.min(cost, this.older[index]);
            this.older[index] -= taken;
            epoch.older -= taken;
        }
    }

    @Override
    long resetAfterMillis(long nowMillis) {
        Epoch epoch = this.epoch;
        return resetAfterMillis(epoch, epoch.count(), nowMillis);
    }

    /** The time until the newest slot that holds a permit leaves the window; zero when none does. */
    private long resetAfterMillis(Epoch epoch, long current, long nowMillis) {
        if (current > 0) {
            return newestExpiry(epoch) - nowMillis;
        }
        if (epoch.older == 0) {
            return 0;
        }
        long expiry = newestExpiry(epoch);
        int index = epoch.oldestIndex;
        for (int i = 0; i < this.older.length; i++) {
            index = (index == 0) ? this.older.length - 1 : index - 1;
            expiry -= this.geometry.slotMillis;
            if (this.older[index] != 0) {
                return expiry - nowMillis;
            }
        }
        return 0;
    }

    @Override
    void clear() {
        Epoch epoch = seal();
        Arrays.fill(this.older, 0);
        epoch.older = 0;
        epoch.setSealedCount(0);
    }

    /** When the newest slot's permits leave the window: its start plus the window. */
    private long newestExpiry(Epoch epoch) {
        return epoch.nextSlotStartMillis + windowMillis() - this.geometry.slotMillis;
    }

    /** Where the oldest slot still in the window sits in the ring when {@code newestSlot} is the newest. */
    private int oldestIndex(long newestSlot) {
        return (this.older.length == 0) ? 0 : (int) Math.floorMod(newestSlot, (long) this.older.length);
    }

    /** A window of {@code slots} slots of {@code slotMillis}: the shape of counters, shared by a limit's. */
    static final class Geometry {

        final long windowMillis;

        final int slots;

        final long slotMillis;

        Geometry(long windowMillis, int slots) {
            LimitDefinition.checkGeometry("Counter", windowMillis, slots);
            this.windowMillis = windowMillis;
            this.slots = slots;
            this.slotMillis = windowMillis / slots;
        }

    }

    /**
     * The newest slot: its count, changed by compare-and-set while open, and what it needs to decide
     * alone. Its other fields change only under the monitor, once sealed.
     */
    static final class Epoch {

        long nextSlotStartMillis;

        /** The permits counted in the older slots. */
        long older;

        /** Where the oldest slot sits in the ring of older slots. */
        int oldestIndex;

        /** The permits counted in the newest slot; {@code -1 - count} once sealed. */
        volatile long current;

        Epoch(long nextSlotStartMillis, long older, int oldestIndex, long current) {
            this.nextSlotStartMillis = nextSlotStartMillis;
            this.older = older;
            this.oldestIndex = oldestIndex;
            this.current = current;
        }

        /** The newest slot's count, open or sealed. */
        long count() {
            long current = this.current;
            return (current < 0) ? -1 - current : current;
        }

        void setSealedCount(long count) {
            this.current = -1 - count;
        }

    }

}
