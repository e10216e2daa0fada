package io.slidinglimiter.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * The upserts that acquire sliding-window-counter limits alone or together, each on a connection of the pool.
 * <p>
 * What {@link UpsertBatches} sends: {@link CounterTable#acquireOne()} for one call, with the time and
 * deadline of when it goes, and for calls that waited, with theirs, {@link CounterTable#acquireMany()}
 * (distinct keys) or {@link CounterTable#acquireEach()} (one key). Each reply teaches the clock the database's time.
 */
final class CounterUpserts implements UpsertBatches.Upserts {

    private static final String ACQUIRE = "acquire";

    private final JdbcConnections connections;

    private final CounterTable table;

    private final StatementClock clock;

    CounterUpserts(JdbcConnections connections, CounterTable table, StatementClock clock) {
        this.connections = connections;
        this.table = table;
        this.clock = clock;
    }

    @Override
    public Decisions alone(LimitRequest request) {
        try (Connection connection = this.connections.open()) {
            Decisions decided = CounterStatements.acquireOne(this.connections, connection, this.table, request,
                    this.clock.now(), this.clock.deadline());
            if (decided == null) {
                throw StatementClock.afterDeadline();
            }
            this.clock.noteDecidedAt(decided.decidedAtMillis());
            return decided;
        }
        catch (SQLException ex) {
            throw JdbcBackendException.of(ACQUIRE, this.table.name(), ex, this.connections.lockWaitMillis());
        }
    }

    @Override
    public Decisions[] together(List<LimitRequest> requests, Long[] fixedNow, Long[] deadlines) {
        return sent((connection) -> CounterStatements.acquireMany(this.connections, connection, this.table, requests,
                fixedNow, deadlines));
    }

    @Override
    public Decisions[] each(List<LimitRequest> requests, Long fixedNow, Long[] deadlines) {
        return sent((connection) -> CounterStatements.acquireEach(this.connections, connection, this.table, requests,
                fixedNow, deadlines));
    }

    /** Runs a statement of several calls on a connection of its own; the first call decided teaches the clock. */
    private Decisions[] sent(Several statement) {
        try (Connection connection = this.connections.open()) {
            Decisions[] decided = statement.on(connection);
            for (Decisions decisions : decided) {
                if (decisions != null) {
                    this.clock.noteDecidedAt(decisions.decidedAtMillis());
                    break;
                }
            }
            return decided;
        }
        catch (SQLException ex) {
            throw JdbcBackendException.of(ACQUIRE, this.table.name(), ex, this.connections.lockWaitMillis());
        }
    }

    /** A statement of several calls, sent on a connection. */
    @FunctionalInterface
    private interface Several {

        Decisions[] on(Connection connection) throws SQLException;

    }

}
