package io.slidinglimiter.core;

import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TimeSourceTests {

    @Test
    void theMonotonicSourceNeverGoesBackAndStartsAtTheWallClock() {
        TimeSource monotonic = TimeSource.monotonic();
        long wallMillis = System.currentTimeMillis();
        long previous = monotonic.currentTimeMillis();
        assertThat(previous).isCloseTo(wallMillis, org.assertj.core.data.Offset.offset(60_000L));
        for (int i = 0; i < 1_000_000; i++) {
            long now = monotonic.currentTimeMillis();
            if (now < previous) {
                throw new AssertionError("went back from " + previous + " to " + now);
            }
            previous = now;
        }
    }

    @Test
    void aTickingSourceServesWhatItLastReadAndCatchesUpOnEachTick() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        assertThat(ticking.currentTimeMillis()).as("not ticking: the clock itself").isEqualTo(1_000);
        ticking.startTicking();
        clock.advanceMillis(7);
        // Each read's path chosen here, not at random: one read in SAMPLED_READS goes to the clock, and a
        // random one once read 1007 "until the next tick".
        assertThat(ticking.readWhileTicking(false)).as("until the next tick").isEqualTo(1_000);
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.readWhileTicking(false)).isEqualTo(1_007);
        clock.advanceMillis(2);
        assertThat(ticking.readWhileTicking(true)).as("a sampled read: the clock itself").isEqualTo(1_009);
        assertThat(ticking.readWhileTicking(false)).as("which raised what the others read").isEqualTo(1_009);
    }

    @Test
    void aTickingSourceStopsAfterItsIdleTicksAndThenReadsTheClock() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        ticking.startTicking();
        ticking.currentTimeMillis();
        assertThat(ticking.tick()).as("read since the last tick").isTrue();
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.tick()).isTrue();
        assertThat(ticking.tick()).as("three ticks without a read").isFalse();
        ticking.stopTicking();
        clock.advanceMillis(5);
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_005);
    }

    @Test
    void aTickingSourceNeverGoesBackWhenItSwitchesBetweenTheFieldAndTheClock() {
        ManualTimeSource clock = new ManualTimeSource(1_000);
        TickingTimeSource ticking = new TickingTimeSource(clock, 3, false);
        clock.advanceMillis(4);
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_004);
        // A tick that read the clock before that read publishes later: the field keeps the newer time.
        ticking.startTicking();
        assertThat(ticking.currentTimeMillis()).isEqualTo(1_004);
        TickingTimeSource stale = new TickingTimeSource(() -> 990, 3, false);
        stale.startTicking();
        assertThat(stale.currentTimeMillis()).isEqualTo(990);
    }

    @Test
    void theSharedTickingSourceParksWhenIdleAndWakesOnTheNextRead() {
        TickingTimeSource ticking = new TickingTimeSource(TimeSource.monotonic(), 200, true);
        TimeSource.Registration user = ticking.register();
        long previous = ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            long now = ticking.currentTimeMillis();
            assertThat(now).isGreaterThanOrEqualTo(previous);
            return ticking.isTicking();
        });
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> !ticking.isTicking());
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(ticking::isTicking);
        assertThat(ticking.currentTimeMillis()).isCloseTo(TimeSource.monotonic().currentTimeMillis(),
                org.assertj.core.data.Offset.offset(1_000L));
        user.close();
    }

    /** The thread dies of an error in the clock it reads: reads must not stay on its last value. */
    @Test
    void timeKeepsMovingAfterTheTickingThreadDies() {
        ManualTimeSource manual = new ManualTimeSource(1_000);
        AtomicBoolean failOnTheThread = new AtomicBoolean();
        TickingTimeSource ticking = new TickingTimeSource(() -> {
            if (Thread.currentThread().getName().equals(TickingTimeSource.THREAD_NAME)
                    && failOnTheThread.compareAndSet(true, false)) {
                throw new IllegalStateException("the clock failed once");
            }
            return manual.currentTimeMillis();
        }, 1_000, true);
        TimeSource.Registration user = ticking.register();
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(ticking::isTicking);
        Thread first = ticking.thread();
        failOnTheThread.set(true);
        await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(10)).until(() -> !first.isAlive());
        manual.advanceMillis(300);
        assertThat(ticking.currentTimeMillis()).as("the read after the thread died").isEqualTo(1_300);
        // That read started a new thread, which serves the field again after its next tick.
        await().atMost(Duration.ofSeconds(10)).until(() -> ticking.thread() != null && ticking.thread() != first);
        manual.advanceMillis(300);
        await().atMost(Duration.ofSeconds(10)).until(() -> ticking.currentTimeMillis() == 1_600);
        user.close();
    }

    /** A thread that cannot tick (here it waits on its clock) holds time back for a bounded number of reads. */
    @Test
    void aStalledTickingThreadHoldsTimeBackForABoundedNumberOfReads() throws Exception {
        ManualTimeSource manual = new ManualTimeSource(1_000);
        CountDownLatch stall = new CountDownLatch(1);
        AtomicBoolean stallTheThread = new AtomicBoolean();
        TickingTimeSource ticking = new TickingTimeSource(() -> {
            if (Thread.currentThread().getName().equals(TickingTimeSource.THREAD_NAME) && stallTheThread.get()) {
                try {
                    stall.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            return manual.currentTimeMillis();
        }, 1_000, true);
        TimeSource.Registration user = ticking.register();
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(ticking::isTicking);
        stallTheThread.set(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> ticking.thread().getState() == Thread.State.WAITING);
        manual.advanceMillis(500);
        int reads = 1;
        while (ticking.currentTimeMillis() != 1_500) {
            reads++;
            assertThat(reads).as("reads before time moved").isLessThan(100 * TickingTimeSource.SAMPLED_READS);
        }
        stall.countDown();
        user.close();
    }

    @Test
    void anInterruptNeitherStopsNorSpinsTheTickingThread() {
        AtomicInteger ticks = new AtomicInteger();
        TickingTimeSource ticking = new TickingTimeSource(() -> {
            if (Thread.currentThread().getName().equals(TickingTimeSource.THREAD_NAME)) {
                ticks.incrementAndGet();
            }
            return 1_000;
        }, 5, true);
        TimeSource.Registration user = ticking.register();
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(() -> ticking.thread() != null);
        Thread thread = ticking.thread();
        // Idle after five ticks, it parks until a read; an interrupt must not make every park return at once.
        await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.WAITING);
        thread.interrupt();
        await().atMost(Duration.ofSeconds(10)).until(() -> !thread.isInterrupted()
                && thread.getState() == Thread.State.WAITING);
        assertThat(ticking.thread()).isSameAs(thread);
        int ticksWhileIdle = ticks.get();
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(() -> ticks.get() > ticksWhileIdle);
        user.close();
    }

    /** Whoever reads first lends the thread neither its inheritable thread-locals nor its class loader. */
    @Test
    void theTickingThreadInheritsNothingFromItsFirstReader() throws Exception {
        InheritableThreadLocal<byte[]> inherited = new InheritableThreadLocal<>();
        AtomicReference<Object> seenValue = new AtomicReference<>("unset");
        AtomicReference<ClassLoader> seenLoader = new AtomicReference<>();
        TickingTimeSource ticking = new TickingTimeSource(() -> {
            if (Thread.currentThread().getName().equals(TickingTimeSource.THREAD_NAME)) {
                seenValue.compareAndSet("unset", inherited.get());
                seenLoader.compareAndSet(null, Thread.currentThread().getContextClassLoader());
            }
            return 1_000;
        }, 1_000, true);
        TimeSource.Registration user = ticking.register();
        ClassLoader webapp = new URLClassLoader(new URL[0], getClass().getClassLoader());
        Thread reader = new Thread(() -> {
            inherited.set(new byte[1024 * 1024]);
            ticking.currentTimeMillis();
        });
        reader.setContextClassLoader(webapp);
        reader.start();
        reader.join();
        await().atMost(Duration.ofSeconds(10)).until(() -> seenLoader.get() != null);
        assertThat(seenValue.get()).as("the reader's inheritable thread-local").isNull();
        assertThat(seenLoader.get()).isNotSameAs(webapp).isSameAs(TickingTimeSource.class.getClassLoader());
        user.close();
    }

    @Test
    void theTickingThreadEndsWhenItsLastUserClosesAndNoneStartsWithoutOne() {
        TickingTimeSource ticking = new TickingTimeSource(TimeSource.monotonic(), 1_000, true);
        ticking.currentTimeMillis();
        assertThat(ticking.thread()).as("no user: reads go to the clock").isNull();
        TimeSource.Registration first = ticking.register();
        TimeSource.Registration second = ticking.register();
        ticking.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(ticking::isTicking);
        Thread thread = ticking.thread();
        first.close();
        first.close();
        assertThat(ticking.thread()).as("one user left").isSameAs(thread);
        second.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> !thread.isAlive());
        assertThat(ticking.isTicking()).isFalse();
        long before = TimeSource.monotonic().currentTimeMillis();
        assertThat(ticking.currentTimeMillis()).isGreaterThanOrEqualTo(before);
        assertThat(ticking.thread()).isNull();
    }

    @Test
    void theManualSourceMovesOnlyForward() {
        ManualTimeSource time = new ManualTimeSource(1_000);
        time.advance(Duration.ofSeconds(2));
        time.advanceMillis(5);
        assertThat(time.currentTimeMillis()).isEqualTo(3_005);
        assertThatIllegalArgumentException().isThrownBy(() -> time.advanceMillis(-1))
                .withMessage("Time only moves forward, but the step was -1ms");
    }

}
