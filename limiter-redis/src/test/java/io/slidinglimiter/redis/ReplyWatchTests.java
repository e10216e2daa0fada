package io.slidinglimiter.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis time after which a call is no longer waited for: {@code max-wait} while its node
 * answers; twice the timeout once a call to it went unanswered, until it answers again; and Redis's
 * clock read from the replies without the lateness of a busy JVM that read one late. Each bound
 * allows for the milliseconds the test itself took, measured around it.
 */
class ReplyWatchTests {

    private static final long TIMEOUT_MILLIS = 100;

    private static final long MAX_WAIT_MILLIS = 2_000;

    /** Redis's clock as a script reply shows it: any epoch milliseconds. */
    private static final long REDIS_MILLIS = 1_800_000_000_000L;

    private final ReplyWatch watch = new ReplyWatch(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS),
            TimeUnit.MILLISECONDS.toNanos(MAX_WAIT_MILLIS));

    private final long notedNanos = System.nanoTime();

    @Test
    void aSilentNodesCallsCarryTheShortDeadlineUntilItAnswersAgain() {
        reply("node-a");
        reply("node-b");
        this.watch.notedRedisTime(List.of(1L, REDIS_MILLIS));
        assertDeadline("node-a", MAX_WAIT_MILLIS);
        this.watch.gaveUpOnSilence("node-a");
        assertDeadline("node-a", 2 * TIMEOUT_MILLIS);
        assertDeadline("node-b", MAX_WAIT_MILLIS);
        reply("node-a");
        assertDeadline("node-a", MAX_WAIT_MILLIS);
    }

    @Test
    void aReplyReadLateDoesNotPutRedisClockBehind() {
        reply("");
        this.watch.notedRedisTime(List.of(1L, REDIS_MILLIS));
        // Read 1.5 s after Redis ran it: Redis's clock looks 1.5 s behind.
        this.watch.notedRedisTime(List.of(1L, REDIS_MILLIS - 1_500));
        assertDeadline("", MAX_WAIT_MILLIS);
    }

    @Test
    void withoutRedisTimeThereIsNoDeadline() {
        assertThat(this.watch.redisDeadlineMillis("")).isEqualTo(-1);
    }

    /** A reply from a node, as the client reads it. */
    private void reply(String node) {
        AsyncCommand<String, String, String> command = new AsyncCommand<>(
                new Command<>(CommandType.PING, new StatusOutput<>(StringCodec.UTF8)));
        this.watch.replied(command, false, node);
        command.complete();
    }

    /** The deadline is Redis's clock (as noted, plus the time since) plus {@code waitMillis}. */
    private void assertDeadline(String node, long waitMillis) {
        long deadline = this.watch.redisDeadlineMillis(node);
        long elapsedMillis = Duration.ofNanos(System.nanoTime() - this.notedNanos).toMillis();
        assertThat(deadline).as("the deadline of %s", node).isBetween(REDIS_MILLIS + waitMillis - 1,
                REDIS_MILLIS + waitMillis + elapsedMillis + 1);
    }

}
