package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A three-master Redis Cluster for tests, from the same binary as {@link RedisServer}: nodes
 * started with cluster-enabled, joined with CLUSTER MEET, the 16384 slots split with ADDSLOTS.
 */
public final class RedisClusterServers implements AutoCloseable {

    private final List<RedisServer> nodes = new ArrayList<>();

    private RedisClusterServers() {
    }

    /**
     * Starts three masters and waits until the cluster is ok.
     * @return the cluster
     */
    public static RedisClusterServers start() {
        RedisClusterServers cluster = new RedisClusterServers();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RedisServer.start(List.of("--cluster-enabled", "yes", "--cluster-config-file",
                        "nodes.conf", "--cluster-node-timeout", "5000")));
            }
            RedisServer first = cluster.nodes.get(0);
            for (RedisServer node : cluster.nodes.subList(1, 3)) {
                first.call((redis) -> redis.clusterMeet("127.0.0.1", node.port()));
            }
            int[][] ranges = { { 0, 5460 }, { 5461, 10922 }, { 10923, 16383 } };
            for (int i = 0; i < 3; i++) {
                int[] slots = IntStream.rangeClosed(ranges[i][0], ranges[i][1]).toArray();
                cluster.nodes.get(i).call((redis) -> redis.clusterAddSlots(slots));
            }
            cluster.awaitOk();
            return cluster;
        }
        catch (RuntimeException ex) {
            cluster.close();
            throw ex;
        }
    }

    /** @return the nodes */
    public List<RedisServer> nodes() {
        return this.nodes;
    }

    private void awaitOk() {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            boolean ok = this.nodes.stream().allMatch((node) -> node.call((redis) -> redis.clusterInfo())
                    .contains("cluster_state:ok"))
                    && this.nodes.stream().allMatch((node) -> node.call((redis) -> redis.clusterNodes())
                            .lines().count() == 3);
            if (ok) {
                return;
            }
            RedisServer.sleepMillis(100);
        }
        throw new IllegalStateException("The test cluster did not become ok within 30 s");
    }

    @Override
    public void close() {
        this.nodes.forEach(RedisServer::close);
    }

}
