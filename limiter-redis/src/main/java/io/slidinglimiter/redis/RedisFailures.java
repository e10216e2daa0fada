package io.slidinglimiter.redis;

import java.util.List;

import io.lettuce.core.RedisCommandExecutionException;

/**
 * What a failure of a Redis call says of Redis, for the failover.
 */
final class RedisFailures {

    /**
     * Error codes by which Redis tells of its own condition (memory, role, loading, a busy script,
     * the cluster): those are Redis's failures, whatever script they came through.
     */
    private static final List<String> REDIS_CONDITIONS = List.of("OOM", "READONLY", "MASTERDOWN", "LOADING", "BUSY",
            "CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS", "MISCONF", "NOSCRIPT", "MOVED", "ASK", "NOAUTH", "NOPERM",
            "WRONGPASS", "CROSSSLOT");

    private RedisFailures() {
    }

    /**
     * Whether a failure is a script error Redis answered that is not one of Redis's conditions: a
     * limit's own (a limit past what Redis counts exactly, data of that limit's keys the script fails
     * on), besides what {@link io.slidinglimiter.failover.RemoteBackend#isLimitsOwn} finds for every
     * backend.
     * @param failure what a call failed with
     * @return true when Redis answered the script with the limit's own error
     */
    static boolean isScriptError(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RedisCommandExecutionException) {
                String message = String.valueOf(cause.getMessage());
                for (String condition : REDIS_CONDITIONS) {
                    if (message.startsWith(condition + " ") || message.contains("-" + condition + " ")
                            || message.contains(": " + condition + " ")) {
                        return false;
                    }
                }
                return message.startsWith("WRONGTYPE") || message.contains("user_script")
                        || message.startsWith("ERR Error running script");
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /**
     * Whether Redis answered the failed call, with an error.
     * @param failure what a call failed with
     * @return whether an error reply caused it
     */
    static boolean answered(Throwable failure) {
        return failure.getCause() instanceof RedisCommandExecutionException;
    }

}
