package io.slidinglimiter.autoconfigure;

import org.springframework.context.SmartLifecycle;

import io.slidinglimiter.failover.ResilientBackend;

/** Gives back what leases hold as the application stops. */
final class LeaseGiveBack implements SmartLifecycle {

    /** After the web server's stop (DEFAULT_PHASE - 2048), before Spring Data Redis's (0) and the pool's close. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private final ResilientBackend backend;

    private volatile boolean running;

    LeaseGiveBack(ResilientBackend backend) {
        this.backend = backend;
    }

    @Override
    public void start() {
        this.running = true;
    }

    @Override
    public void stop() {
        this.backend.endLeases();
        this.running = false;
    }

    @Override
    public boolean isRunning() {
        return this.running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

}
