package io.slidinglimiter.redis;

/**
 * What the load drivers read of a runner's batches (package-private in the library): the batches
 * sent and the decisions they carried, so that a count of script calls in Redis becomes a count
 * of decisions made there.
 */
public final class BatchCounts {

    private BatchCounts() {
    }

    /**
     * @param runner a runner
     * @return the batches it sent so far and the decisions they carried
     */
    public static long[] of(LettuceScriptRunner runner) {
        return runner.batches().counts();
    }

    /**
     * @param runner a runner
     * @param scriptCalls script calls Redis ran for it since a moment
     * @param before {@link #of} at that moment
     * @return the decisions those calls made
     */
    public static long decisionsIn(LettuceScriptRunner runner, long scriptCalls, long[] before) {
        return runner.batches().decisionsIn(scriptCalls, before);
    }

}
