package io.slidinglimiter.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.failover.FailurePolicy;
import io.slidinglimiter.local.LocalBackend;

/**
 * Configuration of Sliding Limiter, under "limiter". An unknown property under "limiter." fails
 * the start, so a misspelt property cannot leave a limit silently unapplied.
 */
@ConfigurationProperties(prefix = "limiter", ignoreUnknownFields = false)
public class LimiterProperties {

    /**
     * Whether rate limiting is on. When false, nothing is limited and no limiter bean is created.
     */
    private boolean enabled = true;

    /**
     * Where counters live, for every limit that does not choose its own backend: the name of a
     * backend the application's modules contribute ("local" always, "redis" with Spring Data Redis).
     */
    private String backend = Backends.LOCAL;

    /**
     * Sub-windows a window is cut into when a limit does not say; 1 to 3600.
     */
    private int defaultSubWindows = 10;

    /**
     * Namespace of the keys the Redis backend writes.
     */
    private String keyPrefix = "limiter";

    /**
     * What to do when a key expression yields null or blank: reject the call, or let it bypass the
     * limit.
     */
    private EmptyKey emptyKey = EmptyKey.REJECT;

    /**
     * Named limits. An @RateLimited of the same name takes these values over its inline ones. Names
     * with dots or capitals are written in brackets: limiter.limits[Orders.place].limit.
     */
    private Map<String, Limit> limits = new LinkedHashMap<>();

    private final Local local = new Local();

    private final Redis redis = new Redis();

    private final Jdbc jdbc = new Jdbc();

    private final Http http = new Http();

    private final Gateway gateway = new Gateway();

    private final Observations observations = new Observations();

    private final Ai ai = new Ai();

    private final Grpc grpc = new Grpc();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getBackend() {
        return this.backend;
    }

    public void setBackend(String backend) {
        this.backend = Backends.normalized(backend);
    }

    public int getDefaultSubWindows() {
        return this.defaultSubWindows;
    }

    public void setDefaultSubWindows(int defaultSubWindows) {
        this.defaultSubWindows = defaultSubWindows;
    }

    public String getKeyPrefix() {
        return this.keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public EmptyKey getEmptyKey() {
        return this.emptyKey;
    }

    public void setEmptyKey(EmptyKey emptyKey) {
        this.emptyKey = emptyKey;
    }

    public Map<String, Limit> getLimits() {
        return this.limits;
    }

    public void setLimits(Map<String, Limit> limits) {
        this.limits = limits;
    }

    public Local getLocal() {
        return this.local;
    }

    public Redis getRedis() {
        return this.redis;
    }

    public Jdbc getJdbc() {
        return this.jdbc;
    }

    public Http getHttp() {
        return this.http;
    }

    public Gateway getGateway() {
        return this.gateway;
    }

    public Observations getObservations() {
        return this.observations;
    }

    public Ai getAi() {
        return this.ai;
    }

    public Grpc getGrpc() {
        return this.grpc;
    }

    /** What to do with a call whose key expression yields null or blank. */
    public enum EmptyKey {

        /** Deny the call; never count it under a shared "null" key. */
        REJECT,

        /** Let the call through without applying that limit. */
        ALLOW

    }

    /** One named limit. */
    public static class Limit {

        /**
         * Permits per window; greater than 0.
         */
        private Long limit;

        /**
         * Window length, for example 1s, 500ms, 1m or PT1H; a whole number of sub-windows milliseconds.
         */
        private Duration window;

        /**
         * Sub-windows the window is cut into, 1 to 3600. Defaults to limiter.default-sub-windows.
         */
        private Integer subWindows;

        /**
         * Counting algorithm: the sliding window counter (memory per key grows with sub-windows), or the
         * exact sliding log (memory per key grows with the limit).
         */
        private Algorithm algorithm = Algorithm.SLIDING_WINDOW_COUNTER;

        /**
         * Where this limit's counters live: a backend's name, as limiter.backend. Defaults to
         * limiter.backend.
         */
        private String backend;

        /**
         * What this limit does when Redis fails. Defaults to limiter.redis.on-failure.
         */
        private FailurePolicy onFailure;

        /**
         * SpEL evaluated when an annotated call ends, with #result and #exception: the permits it
         * finally consumes (admitted against its cost, then settled to this). Wins over the
         * annotation's charge.
         */
        private String charge;

        /**
         * Shadow mode: decided exactly as when enforcing (a call it would reject consumes nothing),
         * but never rejecting; would-be rejections are counted as
         * limiter.requests{outcome=shadow-rejected}, and no RateLimit header shows the limit.
         */
        private boolean shadow;

        /**
         * SpEL naming each call's plan, which chooses its quota among plans; wins over the
         * annotation's plan. Null, blank or unknown: this limit's own limit.
         */
        private String plan;

        /**
         * Other quotas by plan name: the same window and counter as this limit, another limit.
         */
        private Map<String, Plan> plans = new LinkedHashMap<>();

        /**
         * Take permits from Redis in batches for this limit's busy keys and admit them in this
         * instance until spent or their sub-window ends (never more than the limit in any window).
         * Redis limits of the sliding window counter only. Defaults to limiter.redis.lease.
         */
        private Boolean lease;

        public Long getLimit() {
            return this.limit;
        }

        public void setLimit(Long limit) {
            this.limit = limit;
        }

        public Duration getWindow() {
            return this.window;
        }

        public void setWindow(Duration window) {
            this.window = window;
        }

        public Integer getSubWindows() {
            return this.subWindows;
        }

        public void setSubWindows(Integer subWindows) {
            this.subWindows = subWindows;
        }

        public Algorithm getAlgorithm() {
            return this.algorithm;
        }

        public void setAlgorithm(Algorithm algorithm) {
            this.algorithm = algorithm;
        }

        public String getBackend() {
            return this.backend;
        }

        public void setBackend(String backend) {
            this.backend = Backends.normalized(backend);
        }

        public FailurePolicy getOnFailure() {
            return this.onFailure;
        }

        public void setOnFailure(FailurePolicy onFailure) {
            this.onFailure = onFailure;
        }

        public String getCharge() {
            return this.charge;
        }

        public void setCharge(String charge) {
            this.charge = charge;
        }

        public boolean isShadow() {
            return this.shadow;
        }

        public void setShadow(boolean shadow) {
            this.shadow = shadow;
        }

        public String getPlan() {
            return this.plan;
        }

        public void setPlan(String plan) {
            this.plan = plan;
        }

        public Map<String, Plan> getPlans() {
            return this.plans;
        }

        public void setPlans(Map<String, Plan> plans) {
            this.plans = plans;
        }

        public Boolean getLease() {
            return this.lease;
        }

        public void setLease(Boolean lease) {
            this.lease = lease;
        }

    }

    /** One plan of a limit: the quota its callers are compared with. */
    public static class Plan {

        /**
         * Permits per window for callers on this plan; greater than 0.
         */
        private Long limit;

        public Long getLimit() {
            return this.limit;
        }

        public void setLimit(Long limit) {
            this.limit = limit;
        }

    }

    /** Spring AI. */
    /** gRPC services served by Spring gRPC. */
    public static class Grpc {

        /**
         * Whether admitted calls carry the ratelimit and ratelimit-policy headers too (denials always
         * carry them, as trailers).
         */
        private boolean headers = true;

        /**
         * Limits applied to gRPC calls by full method name, with no annotation needed.
         */
        private List<GrpcRule> rules = new ArrayList<>();

        public boolean isHeaders() {
            return this.headers;
        }

        public void setHeaders(boolean headers) {
            this.headers = headers;
        }

        public List<GrpcRule> getRules() {
            return this.rules;
        }

        public void setRules(List<GrpcRule> rules) {
            this.rules = rules;
        }

    }

    /** A limit applied to the calls of a gRPC method, or of every method of a service. */
    public static class GrpcRule {

        /**
         * Name of the limit to apply, under limiter.limits.
         */
        private String limit;

        /**
         * Full name of the gRPC method, for example greet.Greeter/SayHello, or greet.Greeter/* for
         * every method of the service.
         */
        private String method;

        /**
         * SpEL for the counter key over #metadata (the call's io.grpc.Metadata; #metadata['x-api-key']
         * reads an entry) and #clientAddress. Empty: one counter for all matching calls.
         */
        private String key;

        public String getLimit() {
            return this.limit;
        }

        public void setLimit(String limit) {
            this.limit = limit;
        }

        public String getMethod() {
            return this.method;
        }

        public void setMethod(String method) {
            this.method = method;
        }

        public String getKey() {
            return this.key;
        }

        public void setKey(String key) {
            this.key = key;
        }

    }

    public static class Ai {

        private final TokenBudget tokenBudget = new TokenBudget();

        public TokenBudget getTokenBudget() {
            return this.tokenBudget;
        }

    }

    /** A token budget for ChatClient calls: the TokenBudgetAdvisor bean. */
    public static class TokenBudget {

        /**
         * The limit under limiter.limits that is the budget, in tokens per window. Set, it makes the
         * TokenBudgetAdvisor bean, for ChatClient builders' defaultAdvisors.
         */
        private String limit;

        /**
         * Tokens reserved before each call: at least that many must be left in the key's budget (by
         * default 1: a call starts while any token is left); the call is then settled to the total
         * tokens of its response.
         */
        private long reserve = 1;

        /**
         * SpEL giving a call's key (whose budget it spends) over #context, the call's advisor context,
         * and #principal, the signed-in user of the web request it serves; for example
         * "#principal?.name". Default: the advisor parameter TokenBudgetAdvisor.KEY.
         */
        private String key;

        public String getKey() {
            return this.key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public String getLimit() {
            return this.limit;
        }

        public void setLimit(String limit) {
            this.limit = limit;
        }

        public long getReserve() {
            return this.reserve;
        }

        public void setReserve(long reserve) {
            this.reserve = reserve;
        }

    }

    /** What is measured per decision, with Actuator. */
    public static class Observations {

        /**
         * Whether decisions made in memory are timed (limiter.backend.duration) and observed
         * (limiter.decision) too. Off by default: a local decision takes nanoseconds, and a timer and
         * a span around each would cost far more than the decision. Decisions made in Redis are
         * always timed and observed; limiter.requests counts every outcome either way.
         */
        private boolean local;

        public boolean isLocal() {
            return this.local;
        }

        public void setLocal(boolean local) {
            this.local = local;
        }

    }

    /** The in-process backend. */
    public static class Local {

        /**
         * Most counters kept at once. Counters that hold nothing are dropped to make room; past the
         * bound, new keys are counted in a per-limit sketch that can only over-count.
         */
        private long maxKeys = 1_000_000;

        /**
         * Most memory the counters may take, estimated from their arrays and keys (keys over 200
         * bytes are stored as a digest). Default: a tenth of the JVM's maximum heap, at most 256MB.
         */
        private DataSize maxMemory;

        /**
         * New keys per window that each limit's overflow sketch absorbs once the bounds are full,
         * with under 1% of them falsely refused (limits of 3 or more); a limit that overflows takes up
         * to 32 bytes per key of it (20 for a limit under 255 permits with ten sub-windows). Default:
         * ten times as many as the bounds hold counters, in about the bound's own memory. Size it to
         * the floods of new keys the application must absorb.
         */
        private Long overflowKeys;

        public long getMaxKeys() {
            return this.maxKeys;
        }

        public void setMaxKeys(long maxKeys) {
            this.maxKeys = maxKeys;
        }

        public DataSize getMaxMemory() {
            return this.maxMemory;
        }

        public void setMaxMemory(DataSize maxMemory) {
            this.maxMemory = maxMemory;
        }

        public Long getOverflowKeys() {
            return this.overflowKeys;
        }

        public void setOverflowKeys(Long overflowKeys) {
            this.overflowKeys = overflowKeys;
        }

        /** @return the bound on the counters' bytes: the one set, or the heap's share */
        public long maxMemoryBytes() {
            return (this.maxMemory != null) ? this.maxMemory.toBytes() : LocalBackend.defaultMaxBytes();
        }

        /** @return the overflow capacity: the one set, or as many keys as the bounds hold counters */
        public long overflowKeysOrDefault() {
            return (this.overflowKeys != null) ? this.overflowKeys
                    : LocalBackend.defaultOverflowKeys(this.maxKeys, maxMemoryBytes());
        }

    }

    /** The database backend: counters in a PostgreSQL table of the application's DataSource. */
    public static class Jdbc {

        /**
         * What a decision does when the database fails or does not answer in time: fail-open admits,
         * fail-closed rejects (429 with Retry-After), local counts in this instance at the same limit.
         */
        private FailurePolicy onFailure = FailurePolicy.FAIL_OPEN;

        /**
         * Longest a decision waits for a connection of the pool and for the database's reply, or for a
         * counter another session holds locked: then it follows on-failure.
         */
        private Duration timeout = Duration.ofMillis(100);

        /**
         * Longest a decision waits for a connection of the pool held by the limiter's own decisions,
         * or for its reply while the database answers others: a busy application is not a down
         * database. At least the timeout; by default 2s, or the timeout when that is longer.
         */
        private Duration maxWait;

        /**
         * The counters' table. Its run-time limit changes live in <table>_limits, its decide function
         * is <table>_decide.
         */
        private String table = "limiter_counters";

        /**
         * Whether the limiter creates its table at start: embedded (only in an embedded database,
         * so never in PostgreSQL), always (create what is missing), never (Flyway, Liquibase or an
         * administrator created it from classpath:io/slidinglimiter/jdbc/schema-postgresql.sql).
         */
        private SchemaInitialization initializeSchema = SchemaInitialization.EMBEDDED;

        /**
         * Failures in a row after which the database is not called for a while (the circuit breaker
         * opens).
         */
        private int failureThreshold = 3;

        /**
         * How long the open circuit breaker keeps calls away from the database before one probe.
         */
        private Duration openFor = Duration.ofSeconds(1);

        /**
         * Most keys the database reported out of permits that are rejected locally until they free;
         * 0 turns the cache off.
         */
        private int denialCacheSize = 100_000;

        /**
         * How often rows of keys idle past their window are deleted, a bounded number per statement.
         */
        private Duration cleanupInterval = Duration.ofMinutes(1);

        /**
         * Whether database limits of the sliding window counter take leases (permits in batches for
         * busy keys, admitted in this instance), unless limiter.limits.<name>.lease says otherwise.
         */
        private boolean lease;

        /**
         * Whether calls of one sliding-window-counter limit that wait for the four upserts in flight
         * go to the database together, as one upsert that decides each as if it had come alone. A
         * call that finds fewer in flight goes at once, alone.
         */
        private boolean batching = true;

        public boolean isBatching() {
            return this.batching;
        }

        public void setBatching(boolean batching) {
            this.batching = batching;
        }

        public boolean isLease() {
            return this.lease;
        }

        public void setLease(boolean lease) {
            this.lease = lease;
        }

        public FailurePolicy getOnFailure() {
            return this.onFailure;
        }

        public void setOnFailure(FailurePolicy onFailure) {
            this.onFailure = onFailure;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Duration getMaxWait() {
            return this.maxWait;
        }

        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        public String getTable() {
            return this.table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public SchemaInitialization getInitializeSchema() {
            return this.initializeSchema;
        }

        public void setInitializeSchema(SchemaInitialization initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        public int getFailureThreshold() {
            return this.failureThreshold;
        }

        public void setFailureThreshold(int failureThreshold) {
            this.failureThreshold = failureThreshold;
        }

        public Duration getOpenFor() {
            return this.openFor;
        }

        public void setOpenFor(Duration openFor) {
            this.openFor = openFor;
        }

        public int getDenialCacheSize() {
            return this.denialCacheSize;
        }

        public void setDenialCacheSize(int denialCacheSize) {
            this.denialCacheSize = denialCacheSize;
        }

        public Duration getCleanupInterval() {
            return this.cleanupInterval;
        }

        public void setCleanupInterval(Duration cleanupInterval) {
            this.cleanupInterval = cleanupInterval;
        }

    }

    /** When the limiter creates its table, as Spring Session's JDBC store does. */
    public enum SchemaInitialization {

        /** Only in an embedded database: never in PostgreSQL. */
        EMBEDDED,

        /** At every start, what is missing (the DDL is idempotent). */
        ALWAYS,

        /** Never: a migration or an administrator creates it. */
        NEVER

    }

    /** The Redis backend. */
    public static class Redis {

        /**
         * What a decision does when Redis fails or does not answer in time: fail-open admits,
         * fail-closed rejects (429 with Retry-After), local counts in this instance at the same limit.
         */
        private FailurePolicy onFailure = FailurePolicy.FAIL_OPEN;

        /**
         * Longest a decision waits for a Redis that answers nothing, whatever the connection
         * factory's own timeouts: then it follows on-failure.
         */
        private Duration timeout = Duration.ofMillis(100);

        /**
         * Longest a decision waits for its reply while Redis is answering (replies to other
         * commands arrive) or this application is too busy to read it in time: a slow application is
         * not a down Redis. Also the longest the connection may take to open. At least the timeout;
         * by default 2s, or the timeout when that is longer.
         */
        private Duration maxWait;

        /**
         * Failures in a row after which Redis is not called for a while (the circuit breaker opens).
         */
        private int failureThreshold = 3;

        /**
         * How long the open circuit breaker keeps calls away from Redis before one probe.
         */
        private Duration openFor = Duration.ofSeconds(1);

        /**
         * Most keys Redis reported out of permits that are rejected locally until they free; 0 turns
         * the cache off.
         */
        private int denialCacheSize = 100_000;

        /**
         * Whether Redis limits of the sliding window counter take leases (permits in batches for
         * busy keys, admitted in this instance), unless limiter.limits.<name>.lease says otherwise.
         */
        private boolean lease;

        /**
         * Whether decisions that wait for the script calls in flight on the limiter's connection go to
         * Redis together, as one script call that decides each as if it had come alone (on Cluster,
         * decisions whose keys share a hash slot). A decision that finds fewer than two calls in
         * flight goes at once, alone.
         */
        private boolean batching = true;

        public boolean isBatching() {
            return this.batching;
        }

        public void setBatching(boolean batching) {
            this.batching = batching;
        }

        public boolean isLease() {
            return this.lease;
        }

        public void setLease(boolean lease) {
            this.lease = lease;
        }

        public FailurePolicy getOnFailure() {
            return this.onFailure;
        }

        public void setOnFailure(FailurePolicy onFailure) {
            this.onFailure = onFailure;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Duration getMaxWait() {
            return this.maxWait;
        }

        public void setMaxWait(Duration maxWait) {
            this.maxWait = maxWait;
        }

        public int getFailureThreshold() {
            return this.failureThreshold;
        }

        public void setFailureThreshold(int failureThreshold) {
            this.failureThreshold = failureThreshold;
        }

        public Duration getOpenFor() {
            return this.openFor;
        }

        public void setOpenFor(Duration openFor) {
            this.openFor = openFor;
        }

        public int getDenialCacheSize() {
            return this.denialCacheSize;
        }

        public void setDenialCacheSize(int denialCacheSize) {
            this.denialCacheSize = denialCacheSize;
        }

    }

    /** Spring Cloud Gateway routes that use the {@code slidingWindowRateLimiter} bean. */
    public static class Gateway {

        /**
         * The limit each route is decided by, by route id, when it is not the limit of the route's
         * own id (limiter.limits.<routeId>).
         */
        private Map<String, String> routes = new LinkedHashMap<>();

        public Map<String, String> getRoutes() {
            return this.routes;
        }

        public void setRoutes(Map<String, String> routes) {
            this.routes = routes;
        }

    }

    /** HTTP behaviour. */
    public static class Http {

        /**
         * Whether allowed responses carry the RateLimit and RateLimit-Policy headers too (429 responses
         * always do).
         */
        private boolean headers = true;

        /**
         * Order of the rate-limit servlet filter (or WebFlux WebFilter). The default, -90, runs just
         * after Spring Security's filter chain (-100), so keys can use the authenticated principal;
         * set it below -100 to count requests before security runs (failed logins included).
         */
        private int filterOrder = -90;

        /**
         * Limits applied by URL in the servlet filter, with no annotation needed.
         */
        private List<Rule> rules = new ArrayList<>();

        public boolean isHeaders() {
            return this.headers;
        }

        public void setHeaders(boolean headers) {
            this.headers = headers;
        }

        public int getFilterOrder() {
            return this.filterOrder;
        }

        public void setFilterOrder(int filterOrder) {
            this.filterOrder = filterOrder;
        }

        public List<Rule> getRules() {
            return this.rules;
        }

        public void setRules(List<Rule> rules) {
            this.rules = rules;
        }

    }

    /** A limit applied to requests by URL. */
    public static class Rule {

        /**
         * Name of the limit to apply, under limiter.limits.
         */
        private String limit;

        /**
         * Request paths the rule applies to, in Spring PathPattern syntax, for example /api/**.
         */
        private String path;

        /**
         * HTTP methods the rule applies to. Empty: all.
         */
        private List<String> methods = new ArrayList<>();

        /**
         * SpEL for the counter key over #request and #principal, for example #request.remoteAddr.
         * Empty: one counter for all matching requests.
         */
        private String key;

        /**
         * SpEL evaluated after the response, with #status and #response besides #request and
         * #principal: the permits the request finally consumes, for example "#status == 404 ? 1 : 0".
         * Empty: one permit.
         */
        private String charge;

        public String getLimit() {
            return this.limit;
        }

        public void setLimit(String limit) {
            this.limit = limit;
        }

        public String getPath() {
            return this.path;
        }

        public void setPath(String path) {
            this.path = path;
        }

        public List<String> getMethods() {
            return this.methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getKey() {
            return this.key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public String getCharge() {
            return this.charge;
        }

        public void setCharge(String charge) {
            this.charge = charge;
        }

    }

}
