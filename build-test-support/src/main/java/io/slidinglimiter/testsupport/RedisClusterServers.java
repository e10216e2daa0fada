package io.slidinglimiter.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import io.lettuce.core.cluster.SlotHash;

/**
 * A three-master Redis Cluster for tests, from the same binary as {@link RedisServer}: nodes
 * started with cluster-enabled, joined with CLUSTER MEET, the 16384 slots split with ADDSLOTS;
 * optionally a replica for each master ({@link #startWithReplicas()}), for failover tests.
 */
public final class RedisClusterServers implements AutoCloseable {

    private final List<RedisServer> nodes = new ArrayList<>();

    private final List<RedisServer> replicas = new ArrayList<>();

    private RedisClusterServers() {
    }

    /**
     * Starts three masters and waits until the cluster is ok.
     * @return the cluster
     */
    public static RedisClusterServers start() {
        return start(false, 5000);
    }

    /**
     * Starts three masters, each with a replica that the cluster promotes two seconds after its
     * master stops answering (cluster-node-timeout 2000), with cluster-require-full-coverage no so
     * that healthy shards keep answering meanwhile.
     * @return the cluster
     */
    public static RedisClusterServers startWithReplicas() {
        return start(true, 2000);
    }

    /**
     * A key whose hash tag falls in one master's slots: 0 to 5460, 5461 to 10922, 10923 to 16383.
     * @param master the master's index in {@link #nodes()}
     * @return the key
     */
    public static String keyOnMaster(int master) {
        int[] firstSlots = { 0, 5461, 10923, 16384 };
        for (int i = 0;; i++) {
            int slot = SlotHash.getSlot("k" + i);
            if (slot >= firstSlots[master] && slot < firstSlots[master + 1]) {
                return "k" + i;
            }
        }
    }

    private static RedisClusterServers start(boolean withReplicas, int nodeTimeoutMillis) {
        RedisClusterServers cluster = new RedisClusterServers();
        try {
            List<String> arguments = List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", Integer.toString(nodeTimeoutMillis), "--cluster-require-full-coverage",
                    withReplicas ? "no" : "yes");
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RedisServer.start(arguments));
            }
            RedisServer first = cluster.nodes.get(0);
            for (RedisServer node : cluster.nodes.subList(1, 3)) {
                first.call((redis) -> redis.clusterMeet("127.0.0.1", node.port()));
            }
            if (!withReplicas) {
                cluster.awaitKnown(3);
            }
            int[][] ranges = { { 0, 5460 }, { 5461, 10922 }, { 10923, 16383 } };
            for (int i = 0; i < 3; i++) {
                int[] slots = IntStream.rangeClosed(ranges[i][0], ranges[i][1]).toArray();
                cluster.nodes.get(i).call((redis) -> redis.clusterAddSlots(slots));
            }
            if (withReplicas) {
                for (int i = 0; i < 3; i++) {
                    RedisServer replica = RedisServer.start(arguments);
                    cluster.replicas.add(replica);
                    first.call((redis) -> redis.clusterMeet("127.0.0.1", replica.port()));
                }
                cluster.awaitKnown(6);
                for (int i = 0; i < 3; i++) {
                    String masterId = cluster.nodes.get(i).call((redis) -> redis.clusterMyId());
                    cluster.replicas.get(i).call((redis) -> redis.clusterReplicate(masterId));
                }
            }
            cluster.awaitOk(withReplicas ? 6 : 3);
            if (withReplicas) {
                cluster.awaitReplicasInSync();
            }
            return cluster;
        }
        catch (RuntimeException ex) {
            cluster.close();
            throw ex;
        }
    }

    /** @return the masters at start */
    public List<RedisServer> nodes() {
        return this.nodes;
    }

    /** @return the replica of each master at start, in the same order; empty without replicas */
    public List<RedisServer> replicas() {
        return this.replicas;
    }

    /**
     * Whether a node calls itself a master now ({@code CLUSTER NODES}, its {@code myself} line).
     * @param node a node of this cluster
     * @return whether it is a master
     */
    public static boolean isMaster(RedisServer node) {
        try {
            return node.<String>call((redis) -> redis.clusterNodes()).lines()
                    .anyMatch((line) -> line.contains("myself") && line.contains("master"));
        }
        catch (io.lettuce.core.RedisException ex) {
            // A node changing its role may drop its clients: not yet.
            return false;
        }
    }

    /**
     * Waits until every node lists all of them. A CLUSTER MEET is a handshake that a node drops
     * silently if it does not complete within the node timeout (a busy machine, a slow start), so
     * every two seconds each node is asked again to meet those it does not list yet.
     */
    private void awaitKnown(int count) {
        List<RedisServer> all = new ArrayList<>(this.nodes);
        all.addAll(this.replicas);
        long deadline = System.nanoTime() + 30_000_000_000L;
        long nextMeet = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (all.stream().allMatch((node) -> clusterNodes(node).lines().count() == count)) {
                return;
            }
            if (System.nanoTime() > nextMeet) {
                for (RedisServer node : all) {
                    String known = clusterNodes(node);
                    all.stream().filter((other) -> !known.contains("127.0.0.1:" + other.port() + "@"))
                            .forEach((other) -> node.call((redis) -> redis.clusterMeet("127.0.0.1", other.port())));
                }
                nextMeet = System.nanoTime() + 2_000_000_000L;
            }
            RedisServer.sleepMillis(100);
        }
        StringBuilder views = new StringBuilder();
        all.forEach((node) -> views.append("\n").append(node.port()).append(" sees:\n").append(clusterNodes(node)));
        throw new IllegalStateException("The test cluster's nodes did not meet within 30 s" + views);
    }

    private static String clusterNodes(RedisServer node) {
        return node.call((redis) -> redis.clusterNodes());
    }

    private void awaitOk(int count) {
        List<RedisServer> all = new ArrayList<>(this.nodes);
        all.addAll(this.replicas);
        await(() -> all.stream().allMatch((node) -> node.call((redis) -> redis.clusterInfo())
                .contains("cluster_state:ok")) && all.stream().allMatch((node) -> node.call((redis) -> redis.clusterNodes())
                        .lines().count() == count), "The test cluster did not become ok within 30 s");
    }

    private void awaitReplicasInSync() {
        await(() -> this.replicas.stream().allMatch((replica) -> replica.<String>call((redis) -> redis.info("replication"))
                .contains("master_link_status:up")), "The test cluster's replicas did not sync within 30 s");
    }

    private static void await(java.util.function.BooleanSupplier done, String failure) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (done.getAsBoolean()) {
                return;
            }
            RedisServer.sleepMillis(100);
        }
        throw new IllegalStateException(failure);
    }

    @Override
    public void close() {
        this.nodes.forEach(RedisServer::close);
        this.replicas.forEach(RedisServer::close);
    }

}
