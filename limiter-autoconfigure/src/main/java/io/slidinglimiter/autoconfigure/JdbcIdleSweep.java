package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.slidinglimiter.jdbc.JdbcBackend;

/**
 * Deletes the rows of keys idle past their window, in the background, a bounded number per statement.
 * <p>
 * Every interval, statements of up to {@value #ROWS_PER_STATEMENT} rows each until one deletes fewer,
 * at most {@value #STATEMENTS_PER_SWEEP} of them; rows a decision holds are left for the next sweep.
 * A failure waits for the next interval, logged at DEBUG: an unreachable database is said by the
 * outage.
 */
final class JdbcIdleSweep implements SmartInitializingSingleton, DisposableBean {

    private static final Log logger = LogFactory.getLog(JdbcIdleSweep.class);

    static final int ROWS_PER_STATEMENT = 1_000;

    static final int STATEMENTS_PER_SWEEP = 100;

    private final JdbcBackend backend;

    private final long intervalMillis;

    private ScheduledExecutorService sweeper;

    JdbcIdleSweep(JdbcBackend backend, Duration interval) {
        this.backend = backend;
        this.intervalMillis = interval.toMillis();
    }

    @Override
    public void afterSingletonsInstantiated() {
        this.sweeper = Executors.newSingleThreadScheduledExecutor((task) -> {
            Thread thread = new Thread(task, "limiter-jdbc-sweep");
            thread.setDaemon(true);
            return thread;
        });
        this.sweeper.scheduleWithFixedDelay(this::sweep, this.intervalMillis, this.intervalMillis, TimeUnit.MILLISECONDS);
    }

    /** One sweep. */
    void sweep() {
        try {
            for (int i = 0; i < STATEMENTS_PER_SWEEP; i++) {
                if (this.backend.deleteIdle(ROWS_PER_STATEMENT) < ROWS_PER_STATEMENT) {
                    return;
                }
            }
        }
        catch (RuntimeException ex) {
            logger.debug("Idle counters were not deleted this time: " + ex.getMessage());
        }
    }

    @Override
    public void destroy() {
        if (this.sweeper != null) {
            this.sweeper.shutdownNow();
        }
    }

}
