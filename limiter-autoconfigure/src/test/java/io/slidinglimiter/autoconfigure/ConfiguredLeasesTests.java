package io.slidinglimiter.autoconfigure;

import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which limits take leases on which remote backend: each limit on the backend that decides it, and
 * never on another, so that two leasing backends never both count one limit's lease decisions.
 */
class ConfiguredLeasesTests {

    @Test
    void eachLimitLeasesOnlyOnTheBackendThatDecidesIt() {
        LimiterProperties properties = new LimiterProperties();
        properties.setBackend("redis");
        properties.getRedis().setLease(true);
        properties.getJdbc().setLease(true);
        properties.getLimits().put("on-jdbc", limit("jdbc", null));
        properties.getLimits().put("on-redis", limit(null, null));
        properties.getLimits().put("on-redis-without", limit("redis", false));
        properties.getLimits().put("local", limit("local", null));
        Predicate<String> redis = ConfiguredLimits.leased(properties, Backends.REDIS, true);
        Predicate<String> jdbc = ConfiguredLimits.leased(properties, Backends.JDBC, true);
        assertThat(redis).accepts("on-redis", "inline").rejects("on-jdbc", "on-redis-without", "local");
        assertThat(jdbc).accepts("on-jdbc").rejects("on-redis", "on-redis-without", "local", "inline");
    }

    @Test
    void aBackendWhoseLimitsNeverLeaseHasNoTest() {
        LimiterProperties properties = new LimiterProperties();
        properties.setBackend("jdbc");
        properties.getLimits().put("on-jdbc", limit(null, null));
        assertThat(ConfiguredLimits.leased(properties, Backends.JDBC, false)).isNull();
        properties.getLimits().put("hot", limit(null, true));
        assertThat(ConfiguredLimits.leased(properties, Backends.JDBC, false)).accepts("hot").rejects("on-jdbc", "inline");
    }

    private static LimiterProperties.Limit limit(String backend, Boolean lease) {
        LimiterProperties.Limit limit = new LimiterProperties.Limit();
        limit.setBackend(backend);
        limit.setLease(lease);
        return limit;
    }

}
