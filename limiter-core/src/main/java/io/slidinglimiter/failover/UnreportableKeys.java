package io.slidinglimiter.failover;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Logs, once per limit, the reports of fallback admissions a backend drops because the key's own data fails them.
 * <p>
 * Such a report can never land (the key's data fails every statement), and kept it would be sent again
 * after every decision, holding back what the other keys' reports carry. Dropping it loses only what
 * that one key was admitted during the outage.
 */
public final class UnreportableKeys {

    private static final Logger logger = Logger.getLogger(UnreportableKeys.class.getName());

    /** The most limit names remembered as logged: names come from configuration, but stay bounded. */
    private static final int MAX_LOGGED = 1_000;

    private final String serverName;

    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    /**
     * @param serverName the server's name as operators know it, for the log
     */
    public UnreportableKeys(String serverName) {
        this.serverName = serverName;
    }

    /**
     * Notes one key's report dropped: logged if it is its limit's first.
     * @param admitted what the fallbacks admitted for the key
     * @param failure what the server failed the key's report with
     */
    public void dropped(RemoteBackend.Admitted admitted, RuntimeException failure) {
        String limitName = admitted.limit().name();
        if (this.logged.size() < MAX_LOGGED && this.logged.add(limitName)) {
            logger.log(Level.WARNING, () -> this.serverName + " could not count the " + admitted.permits()
                    + " permits that limit '" + limitName + "' admitted for a key by its failure policy while "
                    + this.serverName + " did not decide (" + failure.getMessage() + "): the key's data fails"
                    + " every statement, so that report is dropped and the other keys' reports go on. Further"
                    + " keys of this limit dropped so are not logged.");
        }
    }

}
