-- Sliding Limiter's counters in PostgreSQL (15 or later): one row per limit and key, and one function
-- that decides a call's limits in one statement. For Flyway or Liquibase, copy this file into a
-- migration; with a table named other than limiter_counters (limiter.jdbc.table), replace every
-- "limiter_counters" below with that name. limiter.jdbc.initialize-schema=always runs it at start.
--
-- A sliding window counter's row: geometry '<sub-windows>:<sub-window millis>', newest the newest
-- sub-window (epoch millis / sub-window millis), total the permits in the window, counts the ring of
-- sub-window counts (index: sub-window mod sub-windows, plus one). A sliding log's row: geometry
-- 'log:<window millis>', total, times and counts its admissions (time in epoch millis, permits),
-- oldest first. generation: the database's microseconds when the row was made, so that a refund of a
-- decision made before a reset gives nothing back. expires_at: epoch millis after which the row
-- holds nothing in any window; rows past it are deleted in the background. decision: what the last
-- acquisition by the one-limit statement (CounterTable) was told, which it returns.
CREATE TABLE IF NOT EXISTS limiter_counters (
    limit_name  text     NOT NULL,
    counter_key text     NOT NULL,
    geometry    text     NOT NULL,
    newest      bigint   NOT NULL,
    total       bigint   NOT NULL,
    counts      bigint[] NOT NULL,
    times       bigint[],
    generation  bigint   NOT NULL,
    expires_at  bigint   NOT NULL,
    decision    bigint[],
    PRIMARY KEY (limit_name, counter_key)
) WITH (fillfactor = 70);

-- Limits changed at run time, for every instance: the limit and the configured limit it replaced,
-- as "<limit>:<configured limit>".
CREATE TABLE IF NOT EXISTS limiter_counters_limits (
    limit_name text NOT NULL PRIMARY KEY,
    stored     text NOT NULL
);

-- The sliding window counter, mirroring io.slidinglimiter.local.SlidingWindowCounter: one key's row as
-- a decision at now_ms finds it (the sub-windows that left the window emptied; a row of another
-- geometry, or idle past its window, counted as empty), what a call of cost would be told, and the
-- row after it when mode says to count it: 0 never, 1 if it fits, 2 whether or not it fits (a
-- settle's charge). Returns one array, so that a statement takes it whole: { newest, total,
-- generation, expires_at, then the decision: allowed (1 or 0), remaining, retry-after millis,
-- reset-after millis; then fresh (1: the row starts anew), changed (1: the row differs from the one
-- given), then the counts }. shape: the geometry of the limit's rows, '<n>:<window_ms / n>', which the
-- caller writes. Reads and writes no table.
DROP FUNCTION IF EXISTS limiter_counters_step(text, bigint, bigint, bigint[], bigint, bigint, bigint, bigint, int,
        bigint, bigint, bigint, int);
CREATE OR REPLACE FUNCTION limiter_counters_slide(geometry text, shape text, newest bigint, total bigint,
        counts bigint[], stamp bigint, expires_at bigint, now_ms bigint, generation bigint, n int, window_ms bigint,
        lim bigint, cost bigint, mode int)
    RETURNS bigint[]
    LANGUAGE plpgsql IMMUTABLE
AS $$
#variable_conflict use_variable
DECLARE
    slot_ms bigint := window_ms / n;
    slot bigint := now_ms / slot_ms;
    cur bigint; t bigint; ring bigint[]; s bigint; excess bigint; freed bigint; fresh boolean;
    changed boolean := false; wait bigint := 0; reset_after bigint := 0; added boolean := false;
BEGIN
    fresh := geometry IS DISTINCT FROM shape OR expires_at < now_ms OR slot - newest >= n;
    IF fresh THEN
        cur := slot; t := 0; stamp := generation; ring := array_fill(0::bigint, ARRAY[n]);
    ELSE
        cur := newest; t := total; ring := counts;
        IF slot > cur THEN
            -- The sub-windows being reused leave the window. (Time that stepped back counts in the newest.)
            s := cur + 1;
            WHILE s <= slot LOOP
                t := t - ring[s % n + 1];
                ring[s % n + 1] := 0;
                s := s + 1;
            END LOOP;
            cur := slot;
            changed := true;
        END IF;
    END IF;
    excess := t + cost - lim;
    IF excess > 0 THEN
        -- Until the oldest sub-windows whose permits cover the excess have left the window.
        wait := window_ms;
        freed := 0;
        s := cur - n + 1;
        WHILE s <= cur LOOP
            freed := freed + ring[s % n + 1];
            IF freed >= excess THEN
                wait := (s + n) * slot_ms - now_ms;
                EXIT;
            END IF;
            s := s + 1;
        END LOOP;
    END IF;
    IF mode = 2 OR (mode = 1 AND wait = 0) THEN
        ring[cur % n + 1] := ring[cur % n + 1] + cost;
        t := t + cost;
        added := true;
        changed := true;
    END IF;
    IF t > 0 THEN
        IF added THEN
            reset_after := (cur + n) * slot_ms - now_ms;
        ELSE
            s := cur;
            WHILE s > cur - n LOOP
                IF ring[s % n + 1] > 0 THEN
                    reset_after := (s + n) * slot_ms - now_ms;
                    EXIT;
                END IF;
                s := s - 1;
            END LOOP;
        END IF;
    END IF;
    RETURN ARRAY[cur, t, stamp, now_ms + window_ms + 1000, CASE WHEN wait = 0 THEN 1 ELSE 0 END, greatest(0, lim - t),
            least(wait, window_ms), least(reset_after, window_ms), CASE WHEN fresh THEN 1 ELSE 0 END,
            CASE WHEN changed THEN 1 ELSE 0 END] || ring;
END;
$$;

-- Acquires one sliding-window-counter limit of one key for several calls in turn, each its own
-- decision as if it had come alone, with one row lock and one write: the calls of a hot key that
-- waited together. costs and deadlines (the database time after which a call changes nothing, or
-- null) are the calls', in order. Returns { the time decided at, the row's generation, then four per
-- call: allowed (1 or 0; -1 when run after its deadline, with nothing changed), remaining,
-- retry-after millis, reset-after millis }.
CREATE OR REPLACE FUNCTION limiter_counters_acquire_each(lname text, ckey text, n int, window_ms bigint,
        lim bigint, costs bigint[], fixed_now bigint, deadlines bigint[], lock_wait text)
    RETURNS bigint[]
    LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    gen bigint := floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
    now_ms bigint := coalesce(fixed_now, gen / 1000);
    shape text := n || ':' || (window_ms / n);
    rec record; st bigint[]; decided bigint[] := '{}'; last bigint[]; changed boolean := false;
    in_time boolean := false;
BEGIN
    FOR i IN 1 .. cardinality(costs) LOOP
        in_time := in_time OR deadlines[i] IS NULL OR now_ms <= deadlines[i];
    END LOOP;
    IF NOT in_time THEN
        -- Every caller stopped waiting: nothing is read or written.
        FOR i IN 1 .. cardinality(costs) LOOP
            decided := decided || ARRAY[-1, 0, 0, 0]::bigint[];
        END LOOP;
        RETURN ARRAY[now_ms, 0] || decided;
    END IF;
    PERFORM set_config('lock_timeout', lock_wait, true);
    -- A key without a row gets an empty one first, so that the lock below always holds a row.
    INSERT INTO limiter_counters AS t (limit_name, counter_key, geometry, newest, total, counts, times, generation,
            expires_at, decision)
        VALUES (lname, ckey, shape, now_ms / (window_ms / n), 0, array_fill(0::bigint, ARRAY[n]), NULL, gen,
            now_ms + window_ms + 1000, NULL)
        ON CONFLICT (limit_name, counter_key) DO NOTHING;
    SELECT * INTO rec FROM limiter_counters WHERE limit_name = lname AND counter_key = ckey FOR UPDATE;
    FOR i IN 1 .. cardinality(costs) LOOP
        IF deadlines[i] IS NOT NULL AND now_ms > deadlines[i] THEN
            decided := decided || ARRAY[-1, 0, 0, 0]::bigint[];
            CONTINUE;
        END IF;
        st := limiter_counters_slide(rec.geometry, shape, rec.newest, rec.total, rec.counts, rec.generation,
                rec.expires_at, now_ms, gen, n, window_ms, lim, costs[i], 1);
        decided := decided || st[5:8];
        IF st[10] = 1 OR st[9] = 1 THEN
            rec.geometry := shape; rec.newest := st[1]; rec.total := st[2]; rec.generation := st[3];
            rec.expires_at := st[4]; rec.counts := st[11:]; last := st[5:8]; changed := true;
        END IF;
    END LOOP;
    IF changed THEN
        UPDATE limiter_counters SET geometry = rec.geometry, newest = rec.newest, total = rec.total,
                counts = rec.counts, times = NULL, generation = rec.generation, expires_at = rec.expires_at,
                decision = last
            WHERE limit_name = lname AND counter_key = ckey;
    END IF;
    RETURN ARRAY[now_ms, rec.generation] || decided;
END;
$$;

-- Decides, all or nothing, one call's limits, or peeks at, resets, refunds or settles them, or takes
-- a lease of one sliding-window-counter limit.
--   operation    'acquire', 'peek', 'reset', 'refund', 'settle', 'lease'
--   fixed_now    the time in epoch millis, or null for the database's clock (production: null)
--   at_millis    'acquire', 'lease': the database time after which the caller no longer waits (null:
--                none); 'refund', 'settle': when the admission undone or settled was decided
--   decided_in   'refund', 'settle': the generation of that decision (0: unknown); 'lease': the
--                permits wanted, the call's cost included
--   lock_wait    the longest wait for another session's lock on a counter, millis (0: no bound)
--   names, keys  each limit's name and counter key
--   algorithms   0 sliding window counter, 1 sliding log
--   windows, sub_windows, limits, costs   each limit's window millis, sub-windows, permits per
--                window and cost ('settle': the charge minus what was taken, either sign)
-- Returns { all allowed (1 or 0; -1 when run after the caller's deadline, with nothing changed), the
-- time decided at, then four per limit: allowed (1 or 0), remaining, retry-after millis,
-- reset-after millis; then for 'peek' the count of each limit, for 'acquire' the generation }.
-- 'lease' takes the call's cost and up to decided_in - cost permits more, counted at once in the
-- current sub-window: at most half of what is left after the call, so that the window's last permits
-- go one by one. It returns the acquisition's reply, then the permits taken in all, the time the
-- sub-window ends at (the lease ends by then) and the row's generation, which a give-back (a
-- 'refund' of the unused permits at the lease's time and generation) names.
-- A rejected call consumes nothing; a limit that would have admitted it alone says allowed 1. Rows
-- are locked in (name, key) order, so calls over several limits never deadlock.
CREATE OR REPLACE FUNCTION limiter_counters_decide(operation text, fixed_now bigint, at_millis bigint,
        decided_in bigint, lock_wait bigint, names text[], keys text[], algorithms int[], windows bigint[],
        sub_windows int[], limits bigint[], costs bigint[])
    RETURNS bigint[]
    LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    clock      timestamptz;
    now_ms     bigint;
    generation bigint;
    n_limits   int := cardinality(names);
    lock_order int[];
    writes     boolean := operation IN ('acquire', 'settle', 'lease');
    rec        limiter_counters;
    loaded     limiter_counters[] := '{}';
    present    boolean[] := '{}';
    result     bigint[];
    waits      bigint[] := '{}';
    all_fit    boolean := true;
    i int; j int; k int; s bigint; n int; slot_ms bigint; slot bigint; cur bigint;
    fresh boolean; dirty boolean; added boolean;
    total bigint; stamp bigint; ring bigint[]; times bigint[]; geometry text; shapes text[] := '{}';
    excess bigint; freed bigint; wait bigint; reset_after bigint; held bigint; taken bigint; left_ bigint;
    oldest bigint; amount bigint; made_after boolean; used bigint[] := '{}'; mode int; st bigint[];
    slot_end bigint;
BEGIN
    IF lock_wait > 0 AND operation <> 'peek' THEN
        PERFORM set_config('lock_timeout', lock_wait || 'ms', true);
    END IF;
    IF operation = 'reset' THEN
        FOR i IN 1 .. n_limits LOOP
            DELETE FROM limiter_counters WHERE limit_name = names[i] AND counter_key = keys[i];
        END LOOP;
        clock := clock_timestamp();
        RETURN ARRAY[1, coalesce(fixed_now, floor(extract(epoch FROM clock) * 1000)::bigint)];
    END IF;
    -- Lock the rows first, in one order for every call; a write makes a missing row first, so that
    -- two calls that find none still count one after the other.
    IF n_limits = 1 THEN
        lock_order := ARRAY[1];
    ELSE
        SELECT array_agg(o ORDER BY names[o], keys[o]) INTO lock_order FROM generate_subscripts(names, 1) AS o;
    END IF;
    FOREACH i IN ARRAY lock_order LOOP
        IF operation = 'peek' THEN
            SELECT * INTO rec FROM limiter_counters WHERE limit_name = names[i] AND counter_key = keys[i];
        ELSE
            SELECT * INTO rec FROM limiter_counters WHERE limit_name = names[i] AND counter_key = keys[i] FOR UPDATE;
            IF NOT FOUND AND writes THEN
                INSERT INTO limiter_counters VALUES (names[i], keys[i], '', 0, 0, '{}', NULL, 0, 0)
                    ON CONFLICT DO NOTHING;
                SELECT * INTO rec FROM limiter_counters WHERE limit_name = names[i] AND counter_key = keys[i]
                    FOR UPDATE;
            END IF;
        END IF;
        present[i] := FOUND;
        loaded[i] := rec;
        -- The geometry of the limit's rows, which a row of another no longer counts for.
        shapes[i] := CASE WHEN algorithms[i] = 0 THEN sub_windows[i] || ':' || windows[i] / sub_windows[i]
                ELSE 'log:' || windows[i] END;
    END LOOP;
    clock := clock_timestamp();
    now_ms := coalesce(fixed_now, floor(extract(epoch FROM clock) * 1000)::bigint);
    generation := floor(extract(epoch FROM clock) * 1000000)::bigint;
    IF operation IN ('acquire', 'lease') AND at_millis IS NOT NULL AND now_ms > at_millis THEN
        RETURN ARRAY[-1, now_ms];
    END IF;
    IF operation = 'lease' THEN
        rec := loaded[1];
        st := limiter_counters_slide(rec.geometry, shapes[1], rec.newest, rec.total, rec.counts, rec.generation,
            rec.expires_at, now_ms, generation, sub_windows[1], windows[1], limits[1], costs[1], 0);
        taken := 0;
        slot_end := now_ms;
        stamp := 0;
        IF st[5] = 1 THEN
            taken := costs[1];
            slot_ms := windows[1] / sub_windows[1];
            -- More than the cost only in the newest sub-window by the database's time (not after it stepped back).
            IF st[1] = now_ms / slot_ms THEN
                taken := taken + greatest(0, least(decided_in - costs[1], (limits[1] - st[2] - costs[1]) / 2));
                slot_end := (st[1] + 1) * slot_ms;
                stamp := st[3];
            END IF;
            st := limiter_counters_slide(rec.geometry, shapes[1], rec.newest, rec.total, rec.counts, rec.generation,
                rec.expires_at, now_ms, generation, sub_windows[1], windows[1], limits[1], taken, 2);
        END IF;
        IF st[10] = 1 THEN
            UPDATE limiter_counters SET geometry = shapes[1], newest = st[1], total = st[2], counts = st[11:],
                    times = NULL, generation = st[3], expires_at = st[4]
                WHERE limit_name = names[1] AND counter_key = keys[1];
        END IF;
        RETURN ARRAY[st[5], now_ms] || st[5:8] || ARRAY[taken, slot_end, stamp];
    END IF;

    result := ARRAY[0, now_ms];
    -- Two passes over the limits: the first finds whether all fit, the second writes and answers.
    FOR pass IN 1 .. 2 LOOP
        FOR i IN 1 .. n_limits LOOP
            rec := loaded[i];
            added := false;
            dirty := false;
            IF algorithms[i] = 0 THEN
                -- Sliding window counter: limiter_counters_slide, which counts only in the second pass.
                mode := 0;
                IF pass = 2 AND operation = 'acquire' AND all_fit THEN
                    mode := 1;
                ELSIF pass = 2 AND operation = 'settle' AND costs[i] > 0 THEN
                    mode := 2;
                END IF;
                st := limiter_counters_slide(rec.geometry, shapes[i], rec.newest, rec.total, rec.counts,
                    rec.generation, rec.expires_at, now_ms, generation, sub_windows[i], windows[i], limits[i],
                    costs[i], mode);
                IF pass = 1 THEN
                    waits[i] := st[7];
                    all_fit := all_fit AND st[5] = 1;
                    CONTINUE;
                END IF;
                n := sub_windows[i];
                slot_ms := windows[i] / n;
                cur := st[1];
                total := st[2];
                ring := st[11:];
                dirty := st[10] = 1;
                amount := CASE WHEN operation = 'settle' THEN -costs[i] ELSE costs[i] END;
                IF operation IN ('refund', 'settle') AND amount > 0 AND st[9] = 0 THEN
                    -- Gives back what an admission at at_millis took, if its sub-window is still in the window
                    -- and the row was not made after it (a reset, an expiry).
                    slot := at_millis / slot_ms;
                    made_after := CASE WHEN decided_in > 0 THEN decided_in < st[3]
                            ELSE at_millis < st[3] / 1000 END;
                    IF slot <= cur AND slot > cur - n AND NOT made_after THEN
                        held := ring[slot % n + 1];
                        taken := least(held, amount);
                        IF taken > 0 THEN
                            ring[slot % n + 1] := held - taken;
                            total := total - taken;
                            dirty := true;
                        END IF;
                    END IF;
                END IF;
                IF dirty AND operation <> 'peek' THEN
                    UPDATE limiter_counters SET geometry = shapes[i], newest = cur, total = total, counts = ring,
                            times = NULL, generation = st[3], expires_at = st[4]
                        WHERE limit_name = names[i] AND counter_key = keys[i];
                END IF;
                IF operation IN ('acquire', 'peek') THEN
                    result := result || st[5:8];
                    used[i] := total;
                END IF;
                CONTINUE;
            ELSE
                -- Sliding log, mirroring io.slidinglimiter.local.SlidingLog: a permit counts while its
                -- time is in (now - window, now].
                oldest := now_ms - windows[i];
                geometry := shapes[i];
                fresh := NOT present[i] OR rec.geometry IS DISTINCT FROM geometry OR rec.expires_at < now_ms;
                IF fresh THEN
                    total := 0; stamp := generation; ring := '{}'; times := '{}';
                ELSE
                    total := rec.total; stamp := rec.generation; ring := rec.counts; times := rec.times;
                    k := 1;
                    WHILE k <= cardinality(times) AND times[k] <= oldest LOOP
                        total := total - ring[k];
                        k := k + 1;
                    END LOOP;
                    IF k > 1 THEN
                        times := times[k:];
                        ring := ring[k:];
                    END IF;
                END IF;
                IF pass = 1 THEN
                    excess := total + costs[i] - limits[i];
                    wait := 0;
                    IF excess > 0 THEN
                        wait := windows[i];
                        freed := 0;
                        FOR k IN 1 .. cardinality(times) LOOP
                            freed := freed + ring[k];
                            IF freed >= excess THEN
                                wait := times[k] + windows[i] - now_ms;
                                EXIT;
                            END IF;
                        END LOOP;
                    END IF;
                    waits[i] := wait;
                    all_fit := all_fit AND wait = 0;
                    CONTINUE;
                END IF;
                amount := costs[i];
                IF (operation = 'acquire' AND all_fit) OR (operation = 'settle' AND amount > 0) THEN
                    -- After every admission of the same time or earlier: the log stays in time order.
                    k := cardinality(times);
                    WHILE k >= 1 AND times[k] > now_ms LOOP
                        k := k - 1;
                    END LOOP;
                    times := times[1:k] || now_ms || times[k + 1:];
                    ring := ring[1:k] || amount || ring[k + 1:];
                    total := total + amount;
                    added := operation = 'acquire';
                    dirty := true;
                ELSIF operation IN ('refund', 'settle') AND NOT fresh THEN
                    IF operation = 'settle' THEN
                        amount := -amount;
                    END IF;
                    made_after := CASE WHEN decided_in > 0 THEN decided_in < stamp ELSE at_millis < stamp / 1000 END;
                    IF amount > 0 AND at_millis > oldest AND NOT made_after THEN
                        -- An admission of exactly that cost first, then the others of that millisecond.
                        left_ := amount;
                        FOR j IN 0 .. 1 LOOP
                            FOR k IN 1 .. cardinality(times) LOOP
                                EXIT WHEN left_ = 0;
                                IF times[k] = at_millis AND ring[k] > 0 AND (j = 1 OR ring[k] = amount) THEN
                                    taken := least(ring[k], left_);
                                    ring[k] := ring[k] - taken;
                                    left_ := left_ - taken;
                                END IF;
                            END LOOP;
                        END LOOP;
                        IF left_ < amount THEN
                            total := total - (amount - left_);
                            SELECT coalesce(array_agg(t ORDER BY o), '{}'), coalesce(array_agg(c ORDER BY o), '{}')
                                INTO times, ring
                                FROM unnest(times, ring) WITH ORDINALITY AS e(t, c, o) WHERE c > 0;
                            dirty := true;
                        END IF;
                    END IF;
                END IF;
                IF dirty AND operation <> 'peek' THEN
                    UPDATE limiter_counters SET geometry = geometry, newest = 0, total = total, counts = ring,
                            times = times, generation = stamp, expires_at = now_ms + windows[i] + 1000
                        WHERE limit_name = names[i] AND counter_key = keys[i];
                END IF;
                reset_after := 0;
                IF total > 0 THEN
                    IF added THEN
                        reset_after := windows[i];
                    ELSE
                        reset_after := times[cardinality(times)] + windows[i] - now_ms;
                    END IF;
                END IF;
            END IF;
            IF operation IN ('acquire', 'peek') THEN
                result := result || ARRAY[CASE WHEN waits[i] = 0 THEN 1 ELSE 0 END, greatest(0, limits[i] - total),
                        least(waits[i], windows[i]), least(reset_after, windows[i])];
                used[i] := total;
            END IF;
        END LOOP;
    END LOOP;
    IF operation = 'peek' THEN
        FOR i IN 1 .. n_limits LOOP
            result := result || used[i];
        END LOOP;
    ELSIF operation = 'acquire' THEN
        result := result || generation;
    ELSE
        result := ARRAY[1, now_ms];
    END IF;
    IF all_fit THEN
        result[1] := 1;
    END IF;
    RETURN result;
END;
$$;
