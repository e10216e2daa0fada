package io.slidinglimiter.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.failover.RemoteBackend.Admitted;

import static io.slidinglimiter.redis.ScriptMessages.SETTLE;
import static io.slidinglimiter.redis.ScriptMessages.ZERO;
import static io.slidinglimiter.redis.ScriptMessages.arguments;

/**
 * Counts in Redis what the failure policy admitted while Redis did not decide, as a settle counts
 * a charge beyond the cost.
 */
final class AdmissionReports {

    /** The most keys one report counts in one script call. */
    static final int KEYS_PER_REPORT = 100;

    private final RedisScriptRunner runner;

    private final RedisKeys keys;

    private final RedisRoutes routes;

    private final Supplier<byte[]> now;

    /**
     * @param runner runs the script
     * @param keys the key scheme
     * @param routes the hash slot of a key
     * @param now the time a script is handed
     */
    AdmissionReports(RedisScriptRunner runner, RedisKeys keys, RedisRoutes routes, Supplier<byte[]> now) {
        this.runner = runner;
        this.keys = keys;
        this.routes = routes;
        this.now = now;
    }

    /**
     * Counts permits that the failure policy admitted while Redis did not decide, now and whether or
     * not they fit (as a settle counts a charge beyond the cost): up to {@value #KEYS_PER_REPORT}
     * keys (of one Cluster slot) per script call, one call at a time, in the background.
     * @param admitted the permits of each key
     * @return completes with what could not be counted (Redis failed), empty when all was
     */
    CompletionStage<List<Admitted>> count(List<Admitted> admitted) {
        List<List<Admitted>> calls = new ArrayList<>();
        Map<Integer, List<Admitted>> bySlot = new LinkedHashMap<>();
        for (Admitted each : admitted) {
            int slot = this.routes.slotOf(each.limit(), each.key());
            List<Admitted> call = bySlot.computeIfAbsent(slot, (ignored) -> new ArrayList<>());
            call.add(each);
            if (call.size() == KEYS_PER_REPORT) {
                calls.add(bySlot.remove(slot));
            }
        }
        calls.addAll(bySlot.values());
        return countInTurn(calls, 0);
    }

    private CompletionStage<List<Admitted>> countInTurn(List<List<Admitted>> calls, int next) {
        if (next == calls.size()) {
            return CompletableFuture.completedFuture(List.of());
        }
        List<Admitted> call = calls.get(next);
        byte[][] counterKeys = new byte[call.size()][];
        long[] permits = new long[call.size()];
        List<LimitDefinition> limits = new ArrayList<>(call.size());
        for (int i = 0; i < call.size(); i++) {
            counterKeys[i] = this.keys.counterKey(call.get(i).limit().name(), call.get(i).key());
            permits[i] = call.get(i).permits();
            limits.add(call.get(i).limit());
        }
        CompletionStage<List<Long>> sent;
        try {
            sent = this.runner.runLater(counterKeys, arguments(SETTLE, this.now.get(), ZERO, limits, permits));
        }
        catch (RuntimeException ex) {
            sent = CompletableFuture.failedFuture(ex);
        }
        return sent.handle((reply, failure) -> failure).thenCompose((failure) -> {
            if (failure == null) {
                return countInTurn(calls, next + 1);
            }
            List<Admitted> notCounted = new ArrayList<>();
            calls.subList(next, calls.size()).forEach(notCounted::addAll);
            return CompletableFuture.completedFuture(notCounted);
        });
    }

}
