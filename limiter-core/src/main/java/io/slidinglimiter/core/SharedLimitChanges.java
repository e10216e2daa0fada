package io.slidinglimiter.core;

import java.util.Map;

/**
 * Where limits changed at run time are kept for every instance: the service provider interface of a
 * backend that shares them.
 * <p>
 * A change is kept with the configured limit it replaced, so that an instance applies it only while
 * its own configuration says the same. Every method may throw when the store fails; none waits longer
 * than the backend's own timeout.
 */
public interface SharedLimitChanges {

    /**
     * A limit changed at run time, as stored.
     *
     * @param limit its permits per window; -1 when the stored value is not one this version reads
     * @param configuredLimit the configured limit it replaced; -1 likewise
     * @param stored the value as stored, which {@link #removeStale} compares
     */
    record Stored(long limit, long configuredLimit, String stored) {

        /**
         * A change as every store keeps it: {@code "<limit>:<configured limit>"}.
         * @param limit its permits per window
         * @param configuredLimit the configured limit it replaced
         * @return the text to store
         */
        public static String format(long limit, long configuredLimit) {
            return limit + ":" + configuredLimit;
        }

        /**
         * A change as read from a store.
         * @param stored the text read
         * @return the change; with -1 for both limits when the text is not one {@link #format} writes
         */
        public static Stored parse(String stored) {
            int colon = stored.indexOf(':');
            try {
                if (colon > 0) {
                    return new Stored(Long.parseLong(stored.substring(0, colon)),
                            Long.parseLong(stored.substring(colon + 1)), stored);
                }
            }
            catch (NumberFormatException ex) {
                // Falls through: not a value of ours.
            }
            return new Stored(-1, -1, stored);
        }

    }

    /**
     * The store's server as operators know it, for log messages: {@code "Redis"}, {@code "PostgreSQL"}.
     * @return its name
     */
    String serverName();

    /**
     * Stores a limit for every instance started with the same configured limit.
     * @param limitName the limit's name
     * @param limit its new permits per window
     * @param configuredLimit the permits per window this instance was configured with
     */
    void store(String limitName, long limit, long configuredLimit);

    /**
     * Ends a run-time change on every instance.
     * @param limitName the limit's name
     */
    void remove(String limitName);

    /**
     * Removes a change made under another configuration, unless it changed since it was read.
     * @param limitName the limit's name
     * @param read the change as read
     */
    void removeStale(String limitName, Stored read);

    /**
     * Every stored change.
     * @return by limit name; a value this version cannot read counts as made under another configuration
     */
    Map<String, Stored> load();

}
