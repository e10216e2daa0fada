package io.slidinglimiter.local;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A flood of new keys against a full bound, as an attacker sends it: one request per made-up user,
 * with a victim hammered among them and new legitimate users arriving during and right after it.
 * The overflow sketch, sized to the flood, falsely refuses at most 1 % of the legitimate users, and
 * the victim never gets past its limit.
 */
class KeyFloodTests {

    private static final long START = 1_700_000_000_000L;

    /** As the issue measured it: 5 logins a minute per user. */
    private final LimitDefinition login = LimitDefinition.of("login", 5, Duration.ofMinutes(1), 12);

    private final ManualTimeSource time = new ManualTimeSource(START);

    @Test
    void aFloodAsLargeAsTheOverflowCapacityFalselyRefusesAtMostOnePercentOfNewUsers() {
        LocalBackend backend = new LocalBackend(this.time, 20_000, 1L << 30, 200_000);
        Flood flood = flood(backend, 200_000);
        assertThat(flood.victimAdmitted).as("the victim, in one window").isEqualTo(5);
        assertThat(flood.legitimateRefused).as("of %d new users", flood.legitimate)
                .isLessThanOrEqualTo(flood.legitimate / 100);
        assertThat(backend.overflowDecisions()).as("the bound was full").isGreaterThan(150_000);
        assertThat(backend.heldCounters()).isLessThanOrEqualTo(20_000);
        assertThat(backend.fill()).isEqualTo(1.0);
        assertThat(backend.overflowBytes()).as("the sketch, 40 bytes per key of capacity at the most")
                .isPositive().isLessThanOrEqualTo(200_000L * OverflowSketch.BYTES_PER_KEY);
    }

    /** max-keys 20000 as the issue set it, the overflow by default: a flood of that size is absorbed. */
    @Test
    void byDefaultTheOverflowAbsorbsAFloodAsLargeAsTheBound() {
        LocalBackend backend = new LocalBackend(this.time, 20_000);
        assertThat(backend.overflowKeys()).isEqualTo(20_000);
        Flood flood = flood(backend, 40_000);
        assertThat(flood.victimAdmitted).isEqualTo(5);
        assertThat(flood.legitimateRefused).as("of %d new users", flood.legitimate)
                .isLessThanOrEqualTo(flood.legitimate / 100);
    }

    /** Past its capacity the sketch refuses more new keys, but still never admits the victim past its limit. */
    @Test
    void aFloodFarPastTheCapacityStillNeverLetsTheVictimPastItsLimit() {
        LocalBackend backend = new LocalBackend(this.time, 2_000, 1L << 30, 2_000);
        Flood flood = flood(backend, 200_000);
        assertThat(flood.victimAdmitted).isLessThanOrEqualTo(5);
        this.time.advance(Duration.ofMinutes(2));
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            admitted += backend.tryAcquire(this.login, "victim", 1).allowed() ? 1 : 0;
        }
        assertThat(admitted).as("a window later, the victim's own five").isEqualTo(5);
    }

    /** After a flood, its counters go on the sweeper's schedule once their window has passed, with no new key. */
    @Test
    void aFloodsCountersAreDroppedOnScheduleWithoutANewKey() {
        LocalBackend backend = new LocalBackend(this.time, 50_000, 1L << 30, 50_000, 20);
        try {
            for (int key = 0; key < 30_000; key++) {
                backend.tryAcquire(this.login, "flood-" + key, 1);
            }
            assertThat(backend.heldCounters()).isEqualTo(30_000);
            this.time.advance(Duration.ofMinutes(1).plusSeconds(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.heldCounters() == 0);
            assertThat(backend.liveBytes()).isZero();
        }
        finally {
            backend.close();
        }
    }

    /**
     * {@code floodKeys} made-up users over 55 s, one request each; every 100th request a victim
     * attempt and, from the flood's middle on and for 5 s after it, a new legitimate user.
     */
    private Flood flood(LocalBackend backend, int floodKeys) {
        Flood flood = new Flood();
        long stepMicros = 55_000_000L / floodKeys;
        long elapsedMicros = 0;
        for (int key = 0; key < floodKeys; key++) {
            backend.tryAcquire(this.login, "flood-" + key, 1);
            if (key % 100 == 0) {
                flood.victimAdmitted += backend.tryAcquire(this.login, "victim", 1).allowed() ? 1 : 0;
            }
            if (key >= floodKeys / 2 && key % 100 == 50) {
                flood.legitimate++;
                flood.legitimateRefused += backend.tryAcquire(this.login, "user-" + key, 1).allowed() ? 0 : 1;
            }
            elapsedMicros += stepMicros;
            if (elapsedMicros >= 1_000) {
                this.time.advanceMillis(elapsedMicros / 1_000);
                elapsedMicros %= 1_000;
            }
        }
        for (int i = 0; i < 500; i++) {
            this.time.advanceMillis(10);
            flood.legitimate++;
            flood.legitimateRefused += backend.tryAcquire(this.login, "after-" + i, 1).allowed() ? 0 : 1;
        }
        return flood;
    }

    private static final class Flood {

        int victimAdmitted;

        int legitimate;

        int legitimateRefused;

    }

}
