package io.slidinglimiter.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * Follows a Sentinel promotion at once.
 * <p>
 * It listens to every sentinel's {@code +switch-master}
 * channel and, when one announces a new master for the limiter's master name, makes the limiter's
 * connection anew, which Lettuce resolves through the sentinels to the new master. Without it the
 * connection moves only when the old master's socket fails: seconds after a crash, and never while
 * a stalled master keeps its socket open. Decisions that the old master runs when it wakes change
 * nothing (each carries the time after which its caller stopped waiting).
 */
public final class SentinelFollower implements AutoCloseable {

    static final String SWITCH_MASTER = "+switch-master";

    /** How long the limiter's connection keeps looking for the promoted master. */
    static final Duration RECONNECT_WITHIN = Duration.ofSeconds(30);

    private static final Logger logger = Logger.getLogger(SentinelFollower.class.getName());

    private final RedisClient client;

    private final List<StatefulRedisPubSubConnection<String, String>> connections = new ArrayList<>();

    /** The last switch followed, as announced: {@code <name> <old host> <old port> <new host> <new port>}. */
    private final AtomicReference<String> lastSwitch = new AtomicReference<>();

    /**
     * Starts listening; sentinels that do not answer now are connected to in the background.
     * @param onPromotion what to do when a new master is announced, on a thread of its own (see
     * {@link #forLimiter})
     * @param masterName the master's name in the sentinels
     * @param sentinels where the sentinels listen
     */
    public SentinelFollower(Runnable onPromotion, String masterName, List<RedisURI> sentinels) {
        this.client = RedisClient.create();
        String prefix = masterName + " ";
        for (RedisURI sentinel : sentinels) {
            this.client.connectPubSubAsync(StringCodec.UTF8, sentinel).whenComplete((connection, failure) -> {
                if (failure != null) {
                    logger.log(Level.WARNING, () -> "Sliding Limiter could not listen to the sentinel at " + sentinel
                            + " (" + failure.getMessage() + "); the others still tell it of promotions.");
                    return;
                }
                connection.addListener(new RedisPubSubAdapter<>() {

                    @Override
                    public void message(String channel, String message) {
                        // Every sentinel announces the same switch: the first moves the connection.
                        if (SWITCH_MASTER.equals(channel) && message.startsWith(prefix)
                                && !message.equals(SentinelFollower.this.lastSwitch.getAndSet(message))) {
                            logger.info(() -> "Sentinel promoted a new master (" + message
                                    + "); the rate limiter's decisions move to it now.");
                            // Off the client's event loop: following may wait for the new master.
                            Thread following = new Thread(onPromotion, "sliding-limiter-sentinel-follower");
                            following.setDaemon(true);
                            following.start();
                        }
                    }

                });
                connection.async().subscribe(SWITCH_MASTER);
                synchronized (this.connections) {
                    this.connections.add(connection);
                }
            });
        }
    }

    /**
     * Follows promotions for the limiter: moves its connection to the new master (asking the
     * sentinels again until the connection reaches one, for up to {@link #RECONNECT_WITHIN}), then
     * forgets the old master's failures.
     * @param runner the limiter's runner
     * @param backend the limiter's backend
     * @param masterName the master's name in the sentinels
     * @param sentinels where the sentinels listen
     * @return the follower, listening
     */
    public static SentinelFollower forLimiter(LettuceScriptRunner runner, ResilientRedisBackend backend,
            String masterName, List<RedisURI> sentinels) {
        return new SentinelFollower(() -> {
            if (!reconnectToMaster(runner, RECONNECT_WITHIN)) {
                logger.warning(() -> "Sliding Limiter did not reach the master that Sentinel promoted within "
                        + RECONNECT_WITHIN.toSeconds() + " s; decisions follow limiter.redis.on-failure until"
                        + " Redis answers.");
            }
            backend.serverChanged();
        }, masterName, sentinels);
    }

    @Override
    public void close() {
        synchronized (this.connections) {
            this.connections.forEach(StatefulRedisPubSubConnection::close);
            this.connections.clear();
        }
        this.client.shutdown(0, 2, TimeUnit.SECONDS);
    }

    /**
     * Makes the connection anew until it reaches a server that says it is a master ({@code ROLE}),
     * trying again every 100 ms, each check bounded by the timeout. Right after a promotion a
     * sentinel that has not yet heard of it may still name the old master (one that stalled would
     * hold the new connection, and run what it queued, when it wakes); the sentinels are asked again
     * until they name the new one. Blocks the calling thread as long.
     * @param within how long to keep trying
     * @return whether a master was reached
     */
    static boolean reconnectToMaster(LettuceScriptRunner runner, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            runner.reconnect();
            try {
                List<Object> role = runner.call((commands) -> commands.role());
                Object first = role.isEmpty() ? null : role.get(0);
                String name = (first instanceof byte[] bytes) ? new String(bytes, StandardCharsets.US_ASCII)
                        : String.valueOf(first);
                if (name.equals("master")) {
                    return true;
                }
            }
            catch (RuntimeException ex) {
                // Not reached, or not answering: ask the sentinels again.
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

}
