package io.slidinglimiter.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock that decisions read from a field: while they are being taken, a background thread reads
 * the underlying clock once a millisecond; after {@code idleTicks} ticks without a read it parks,
 * and reads go to the underlying clock (and wake it) until it runs again. Reading the system clock
 * costs about 25 ns on a virtual machine, half of an in-process decision; a field costs one.
 * <p>
 * The value lags the underlying clock by at most a tick and the thread's scheduling delay, and it
 * never decreases: whoever reads the underlying clock raises the shared value to what it read.
 */
final class TickingTimeSource implements TimeSource {

    /** The production instance: the monotonic clock, idle after a second without a read. */
    static final TickingTimeSource MONOTONIC = new TickingTimeSource(MonotonicTimeSource.INSTANCE, 1_000, true);

    private static final long TICK_NANOS = 1_000_000;

    private static final VarHandle MILLIS;

    private static final VarHandle WAKE_REQUESTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MILLIS = lookup.findVarHandle(TickingTimeSource.class, "millis", long.class);
            WAKE_REQUESTED = lookup.findVarHandle(TickingTimeSource.class, "wakeRequested", boolean.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final TimeSource clock;

    private final int idleTicks;

    private final boolean threaded;

    /** The newest time read from the clock by anyone. */
    private volatile long millis;

    /** Whether the thread is ticking, so that {@link #millis} is current. */
    private volatile boolean ticking;

    /** Whether a decision read the time since the last tick. */
    private volatile boolean read;

    private volatile boolean wakeRequested;

    private int ticksWithoutRead;

    private Thread thread;

    /**
     * Creates a clock.
     * @param clock the underlying clock
     * @param idleTicks the ticks without a read after which the thread parks
     * @param threaded whether a read wakes a thread of its own; without, tests drive {@link #tick()}
     */
    TickingTimeSource(TimeSource clock, int idleTicks, boolean threaded) {
        this.clock = clock;
        this.idleTicks = idleTicks;
        this.threaded = threaded;
        this.millis = clock.currentTimeMillis();
    }

    @Override
    public long currentTimeMillis() {
        if (this.ticking) {
            if (!this.read) {
                this.read = true;
            }
            return this.millis;
        }
        if (!this.wakeRequested && WAKE_REQUESTED.compareAndSet(this, false, true)) {
            wake();
        }
        return raiseTo(this.clock.currentTimeMillis());
    }

    /** Whether reads are served from the field: for tests. */
    boolean isTicking() {
        return this.ticking;
    }

    /**
     * Reads the clock once; what the thread does each millisecond.
     * @return false when nobody read the time for {@code idleTicks} ticks: time to park
     */
    boolean tick() {
        raiseTo(this.clock.currentTimeMillis());
        if (this.read) {
            this.read = false;
            this.ticksWithoutRead = 0;
            return true;
        }
        return ++this.ticksWithoutRead < this.idleTicks;
    }

    /**
     * Serves reads from the field from now on: what the thread does when woken, and what tests call
     * before they drive {@link #tick()} themselves.
     */
    void startTicking() {
        raiseTo(this.clock.currentTimeMillis());
        this.ticksWithoutRead = 0;
        this.ticking = true;
    }

    /** Stops ticking: reads go to the clock again. */
    void stopTicking() {
        this.ticking = false;
    }

    private long raiseTo(long now) {
        long seen = this.millis;
        while (seen < now) {
            if (MILLIS.compareAndSet(this, seen, now)) {
                return now;
            }
            seen = this.millis;
        }
        return seen;
    }

    private synchronized void wake() {
        if (!this.threaded) {
            return;
        }
        if (this.thread == null) {
            this.thread = new Thread(this::run, "sliding-limiter-clock");
            this.thread.setDaemon(true);
            this.thread.start();
        }
        else {
            LockSupport.unpark(this.thread);
        }
    }

    private void run() {
        while (true) {
            this.wakeRequested = false;
            startTicking();
            while (tick()) {
                LockSupport.parkNanos(this, TICK_NANOS);
            }
            stopTicking();
            // A read that found the thread ticking just now was served; the next one wakes it.
            while (!this.wakeRequested) {
                LockSupport.park(this);
            }
        }
    }

}
