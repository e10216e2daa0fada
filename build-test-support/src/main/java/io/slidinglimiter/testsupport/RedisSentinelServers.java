package io.slidinglimiter.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Sentinel-managed Redis for tests: a master, one replica, three sentinels (quorum 2, down after
 * one second), from the same binary as {@link RedisServer}, on free ports.
 */
public final class RedisSentinelServers implements AutoCloseable {

    /** The name the sentinels know the master by. */
    public static final String MASTER = "limiter-master";

    private final RedisServer master;

    private final RedisServer replica;

    private final List<RedisServer> sentinels = new ArrayList<>();

    private RedisSentinelServers() {
        this.master = RedisServer.start();
        this.replica = RedisServer.start(List.of("--replicaof", "127.0.0.1", Integer.toString(this.master.port())));
    }

    /**
     * Starts them and waits until every sentinel knows the replica and the other sentinels.
     * @return the servers
     */
    public static RedisSentinelServers start() {
        RedisSentinelServers servers = new RedisSentinelServers();
        try {
            for (int i = 0; i < 3; i++) {
                servers.sentinels.add(RedisServer.startSentinel(MASTER, servers.master.port()));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!servers.replica.<String>call((redis) -> redis.info("replication")).contains("master_link_status:up")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("The replica did not sync with the master in 30 s");
                }
                RedisServer.sleepMillis(50);
            }
            while (!servers.sentinels.stream().allMatch((sentinel) -> sentinel
                    .<String>call((redis) -> redis.info("sentinel")).contains("slaves=1,sentinels=3"))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("The sentinels did not find the replica and each other in 30 s");
                }
                RedisServer.sleepMillis(100);
            }
            return servers;
        }
        catch (RuntimeException ex) {
            servers.close();
            throw ex;
        }
    }

    /** @return the master at start */
    public RedisServer master() {
        return this.master;
    }

    /** @return the replica at start, which Sentinel promotes when the master fails */
    public RedisServer replica() {
        return this.replica;
    }

    /** @return the sentinels */
    public List<RedisServer> sentinels() {
        return this.sentinels;
    }

    /** @return {@code 127.0.0.1:<port>} of each sentinel, as spring.data.redis.sentinel.nodes takes them */
    public List<String> sentinelNodes() {
        return this.sentinels.stream().map((sentinel) -> "127.0.0.1:" + sentinel.port()).toList();
    }

    @Override
    public void close() {
        this.sentinels.forEach(RedisServer::close);
        this.replica.close();
        this.master.close();
    }

}
