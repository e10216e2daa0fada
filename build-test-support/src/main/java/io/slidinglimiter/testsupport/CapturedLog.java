package io.slidinglimiter.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Captures the records one {@code java.util.logging} category publishes while it is open.
 * <p>
 * For tests that assert what was logged, at which level, how often.
 */
public final class CapturedLog extends Handler implements AutoCloseable {

    /** The records published so far. */
    public final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private final Logger logger;

    /**
     * Starts capturing.
     * @param category the logger's name, usually a class's
     */
    public CapturedLog(String category) {
        this.logger = Logger.getLogger(category);
        this.logger.addHandler(this);
    }

    @Override
    public void publish(LogRecord record) {
        this.records.add(record);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        this.logger.removeHandler(this);
    }

}
