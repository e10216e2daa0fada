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
        assertThat(backend.overflowBytes()).as("the sketch, 24 bytes per key of capacity for this limit")
                .isPositive().isLessThanOrEqualTo(200_000L * 24);
    }

    /**
     * max-keys 20000 as the issue set it, the overflow by default: a flood of ten times the bound in
     * one minute is absorbed, at most 1 % of new users refused, the victim exact, and the sketch takes
     * no more memory than the bound's own counters.
     */
    @Test
    void byDefaultTheOverflowAbsorbsAFloodOfTenTimesTheBoundInTheBoundsOwnMemory() {
        LocalBackend backend = new LocalBackend(this.time, 20_000, 1L << 30);
        assertThat(backend.overflowKeys()).isEqualTo(200_000);
        long bytesBefore = backend.liveBytes();
        Flood flood = flood(backend, 200_000);
        assertThat(flood.victimAdmitted).isEqualTo(5);
        assertThat(flood.legitimateRefused).as("of %d new users", flood.legitimate)
                .isLessThanOrEqualTo(flood.legitimate / 100);
        long countersBytes = backend.liveBytes();
        System.out.printf("limiter.local.bytes before the flood %d, after %d: counters %d (%d held), sketch %d;"
                + " %d of %d new users refused%n", bytesBefore, countersBytes + backend.overflowBytes(), countersBytes,
                backend.heldCounters(), backend.overflowBytes(), flood.legitimateRefused, flood.legitimate);
        assertThat(backend.overflowBytes()).as("the sketch against the bound's counters").isPositive()
                .isLessThanOrEqualTo(countersBytes);
    }

    /** A limit past 254 permits counts in two-byte cells, past 65 534 in four: the same flood is absorbed. */
    @Test
    void limitsOfWiderCellsAbsorbTheSameFlood() {
        for (long limit : new long[] { 1_000, 100_000 }) {
            LimitDefinition wide = LimitDefinition.of("wide-" + limit, limit, Duration.ofMinutes(1), 12);
            LocalBackend backend = new LocalBackend(this.time, 2_000, 1L << 30);
            for (int key = 0; key < 20_000; key++) {
                assertThat(backend.tryAcquire(wide, "flood-" + key, 1).allowed()).isTrue();
            }
            long admitted = 0;
            while (backend.tryAcquire(wide, "victim", 1).allowed()) {
                admitted++;
            }
            assertThat(admitted).as("a new key through the sketch, never past its limit").isLessThanOrEqualTo(limit)
                    .isGreaterThan((long) (limit * 0.99));
            assertThat(backend.overflowBytes()).isLessThanOrEqualTo(20_000L * OverflowSketch.BYTES_PER_KEY);
        }
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
