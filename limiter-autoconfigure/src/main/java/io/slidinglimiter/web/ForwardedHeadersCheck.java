package io.slidinglimiter.web;

import java.util.Set;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationStartedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;

/**
 * Warns once, when the application has started, that client addresses can be chosen by clients:
 * some limit reads the client's address while {@code server.forward-headers-strategy} is
 * {@code framework}, under which Spring takes it from the {@code X-Forwarded-For} or
 * {@code Forwarded} header the client sends.
 */
public final class ForwardedHeadersCheck implements ApplicationListener<ApplicationStartedEvent> {

    private static final Log logger = LogFactory.getLog(ForwardedHeadersCheck.class);

    static final String STRATEGY = "server.forward-headers-strategy";

    private final Environment environment;

    private final Supplier<Set<String>> readingClientAddress;

    /**
     * Creates the check.
     * @param environment where the strategy is set
     * @param readingClientAddress the limits' expressions that read the client's address
     */
    public ForwardedHeadersCheck(Environment environment, Supplier<Set<String>> readingClientAddress) {
        this.environment = environment;
        this.readingClientAddress = readingClientAddress;
    }

    @Override
    public void onApplicationEvent(ApplicationStartedEvent event) {
        String message = warning();
        if (message != null) {
            logger.warn(message);
        }
    }

    /** @return the warning this application deserves, or null */
    String warning() {
        String strategy = this.environment.getProperty(STRATEGY, "");
        if (!"framework".equalsIgnoreCase(strategy.trim())) {
            return null;
        }
        Set<String> expressions = this.readingClientAddress.get();
        if (expressions.isEmpty()) {
            return null;
        }
        return "Rate limits read the client address (" + String.join(", ", expressions) + ") while " + STRATEGY
                + " is 'framework': Spring then takes the address from the X-Forwarded-For or Forwarded header"
                + " the client sends, so any client can name its own address, a new one per request, and is never"
                + " limited. Safe setups: '" + STRATEGY + ": native' with server.tomcat.remoteip.internal-proxies set"
                + " to your proxies' addresses only (or no forwarded headers at all when no proxy is in front), or"
                + " keys from an authenticated identity (#principal). See docs/http.md, \"Client addresses\".";
    }

}
