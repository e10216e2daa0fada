package io.slidinglimiter.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The limiter's Lua.
 * <p>
 * What writing a counter shares, the two algorithms' files, then one function
 * {@code decide(KEYS, ARGV)} made of the decision's time, the common decision's straight path and
 * the driver that decides with the algorithms, and last the entry that calls it once, or once per
 * decision of a batch: joined into one script so that a decision over any mix of limits, or a batch
 * of decisions, is one {@code EVALSHA}.
 */
public final class RedisScripts {

    /** The script every decision runs. */
    public static final RedisScripts DECIDE = new RedisScripts(
            new String[] { "write.lua", "sliding-window-counter.lua", "sliding-log.lua" },
            new String[] { "now.lua", "fast-path.lua", "decide.lua" }, "batch.lua");

    private final String source;

    private final String sha1;

    private RedisScripts(String[] definitions, String[] decision, String entry) {
        StringBuilder source = new StringBuilder();
        for (String file : definitions) {
            source.append(read(file)).append('\n');
        }
        // Parameters named KEYS and ARGV: the decision's files read one decision's slice of a batch as
        // they read a script's own KEYS and ARGV, and their returns end the decision, not the script.
        // The batch's one read of the clock and a decision's place in it, which batch.lua sets and now.lua reads.
        source.append("local batch_time, batch_offset = nil, 0\n");
        // What a batch's decisions read once and share: the clock's numbers (now.lua), and a limit's
        // numbers and texts while decisions of one limit follow one another (fast-path.lua). Kept
        // for one script call only: Lua makes these afresh each time Redis runs the script.
        source.append("local clock, clock_micros\n");
        source.append("local limit_args, limit_window, limit_slots, limit_permits, limit_cost, limit_slot_ms,"
                + " limit_geometry, limit_ttl, limit_slot, limit_field\n");
        source.append("local function decide(KEYS, ARGV)\n");
        for (String file : decision) {
            source.append(read(file)).append('\n');
        }
        source.append("end\n").append(read(entry)).append('\n');
        this.source = source.toString();
        this.sha1 = sha1(this.source);
    }

    /** @return the script's text, for {@code EVAL} or {@code SCRIPT LOAD} */
    public String source() {
        return this.source;
    }

    /** @return the SHA-1 Redis knows the script by, for {@code EVALSHA} */
    public String sha1() {
        return this.sha1;
    }

    private static String read(String file) {
        try (InputStream in = RedisScripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("Missing script " + file + " next to " + RedisScripts.class.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("Every Java platform has SHA-1", ex);
        }
    }

}
