package io.slidinglimiter.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * A clock that decisions read from a field.
 * <p>
 * While they are being taken, a background thread reads
 * the underlying clock once a millisecond; after {@code idleTicks} ticks without a read it parks,
 * and reads go to the underlying clock (and wake it) until it runs again. Reading the system clock
 * costs about 25 ns on a virtual machine, half of an in-process decision; a field costs one.
 * <p>
 * The value lags the underlying clock by at most a tick and the thread's scheduling delay, and it
 * never decreases: whoever reads the underlying clock raises the shared value to what it read.
 * <p>
 * <b>Time keeps moving whatever happens to the thread.</b> One read in {@value #SAMPLED_READS},
 * chosen at random per reading thread, goes to the underlying clock even while the thread ticks, so
 * a thread that is stalled (waiting for a processor) holds time back for about that many reads at
 * most; a thread that ends, by an error or when its last user closes, first stops serving the field.
 * An interrupt is not a reason to stop or to spin: the thread clears it and goes on.
 * <p>
 * <b>The thread's life.</b> It runs only while some user has {@linkplain #register() registered}
 * (a backend, from its creation until it is closed, as the application context closes it); without
 * one, reads go to the underlying clock. It is started by a read, without the reading thread's
 * inheritable thread-locals and with this library's class loader as its context loader, so it pins
 * nothing of whoever read first, and it ends when the last user closes.
 */
final class TickingTimeSource implements TimeSource {

    /** The production instance: the monotonic clock, idle after a second without a read. */
    static final TickingTimeSource MONOTONIC = new TickingTimeSource(MonotonicTimeSource.INSTANCE, 1_000, true);

    /** One read in this many (a power of two) goes to the underlying clock while the thread ticks. */
    static final int SAMPLED_READS = 1_024;

    static final String THREAD_NAME = "sliding-limiter-clock";

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

    /** The ticking thread, if one runs; written under this clock's monitor. */
    private volatile Thread thread;

    /** Registered users not yet closed; written under this clock's monitor. */
    private volatile int users;

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
            return readWhileTicking((ThreadLocalRandom.current().nextInt() & (SAMPLED_READS - 1)) == 0);
        }
        if (this.users > 0 && !this.wakeRequested && WAKE_REQUESTED.compareAndSet(this, false, true)) {
            wake();
        }
        return raiseTo(this.clock.currentTimeMillis());
    }

    /**
     * A read while the thread ticks: from the field, or, when {@code sampled}, from the underlying
     * clock, raising the field to it. Apart from the random choice, so that a model checker (which
     * cannot replay one) drives both outcomes.
     * @param sampled whether this read goes to the underlying clock
     * @return the time
     */
    long readWhileTicking(boolean sampled) {
        if (!this.read) {
            this.read = true;
        }
        return sampled ? raiseTo(this.clock.currentTimeMillis()) : this.millis;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The ticking thread stops when the last registration is closed.
     */
    @Override
    public Registration register() {
        synchronized (this) {
            this.users++;
        }
        // The next read starts the thread.
        AtomicBoolean open = new AtomicBoolean(true);
        return () -> {
            if (open.compareAndSet(true, false)) {
                release();
            }
        };
    }

    /** Whether reads are served from the field: for tests. */
    boolean isTicking() {
        return this.ticking;
    }

    /** The ticking thread, or null: for tests. */
    Thread thread() {
        return this.thread;
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
        if (!this.threaded || this.users == 0) {
            this.wakeRequested = false;
            return;
        }
        if (this.thread == null) {
            // No inherited thread-locals, and no context class loader of whoever read first.
            Thread started = new Thread(null, this::run, THREAD_NAME, 0, false);
            started.setContextClassLoader(TickingTimeSource.class.getClassLoader());
            started.setDaemon(true);
            this.thread = started;
            started.start();
        }
        else {
            LockSupport.unpark(this.thread);
        }
    }

    private void release() {
        Thread stopping;
        synchronized (this) {
            this.users--;
            if (this.users > 0 || this.thread == null) {
                return;
            }
            stopping = this.thread;
            this.thread = null;
        }
        // The thread sees that it is no longer this clock's thread, stops serving the field and ends.
        LockSupport.unpark(stopping);
    }

    private void run() {
        Thread self = Thread.currentThread();
        try {
            while (true) {
                this.wakeRequested = false;
                startTicking();
                while (tick()) {
                    if (this.thread != self) {
                        return;
                    }
                    LockSupport.parkNanos(this, TICK_NANOS);
                    // An interrupt would make every later park return at once: the thread would spin.
                    Thread.interrupted();
                }
                stopTicking();
                // A read that found the thread ticking just now was served; the next one wakes it.
                while (!this.wakeRequested) {
                    if (this.thread != self) {
                        return;
                    }
                    LockSupport.park(this);
                    Thread.interrupted();
                }
            }
        }
        finally {
            synchronized (this) {
                if (this.thread == self) {
                    this.thread = null;
                }
                if (this.thread == null) {
                    // Reads go to the clock, and the next one starts a thread again.
                    stopTicking();
                    this.wakeRequested = false;
                }
            }
        }
    }

}
