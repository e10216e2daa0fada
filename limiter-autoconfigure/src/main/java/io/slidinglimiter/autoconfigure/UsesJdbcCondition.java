package io.slidinglimiter.autoconfigure;

/** Matches when the global backend or any limit's is jdbc. */
class UsesJdbcCondition extends UsesBackendCondition {

    UsesJdbcCondition() {
        super(Backends.JDBC);
    }

}
