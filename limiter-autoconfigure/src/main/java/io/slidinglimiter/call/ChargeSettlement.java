package io.slidinglimiter.call;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import io.slidinglimiter.Decision;
import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.core.LimitRequest;
import io.slidinglimiter.failover.LateFailure;

/**
 * Settles a charged call once it ended (an annotated method, or a request under a URL rule).
 * <p>
 * Evaluates each limit's {@code charge} with what the call ended with ({@code #result} and
 * {@code #exception}, or {@code #status} and {@code #response}), settles the limits whose charge
 * differs from their cost, and brings the request's RateLimit headers up to date. Nothing here
 * reaches the caller: a charge
 * that fails, gives no number or a negative one, or a settle the backend refuses, leaves the call
 * at its cost, is counted ({@code limiter.charge.errors}) and logged once per limit.
 */
public final class ChargeSettlement {

    private static final Log logger = LogFactory.getLog(ChargeSettlement.class);

    private final Supplier<RateLimiters> rateLimiters;

    private final Supplier<LimitRegistry> registry;

    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /**
     * Creates the settlement.
     * @param rateLimiters settles
     * @param registry the limits, whose statistics count what could not be settled
     */
    public ChargeSettlement(Supplier<RateLimiters> rateLimiters, Supplier<LimitRegistry> registry) {
        this.rateLimiters = rateLimiters;
        this.registry = registry;
    }

    /**
     * Settles a call on the calling thread.
     * @param requests what the call was admitted for
     * @param chargeOf the charge of each request, null where it costs its cost
     * @param taken the admission
     * @param ended the variables of the call once it ended
     * @param web the request the call serves, or null
     */
    public void settle(List<LimitRequest> requests, List<Expression> chargeOf, Decisions taken,
            EvaluationContext ended, InboundCall web) {
        long[] charges = charges(requests, chargeOf, ended);
        if (charges == null) {
            return;
        }
        RuntimeException failure = null;
        try {
            this.rateLimiters.get().settle(requests, taken, charges);
        }
        catch (RuntimeException ex) {
            failure = ex;
        }
        settled(requests, chargeOf, taken, charges, failure, web);
    }

    /**
     * What each limit finally charges: its cost unless its charge says otherwise (and works).
     * @param requests what the call was admitted for
     * @param chargeOf the charge of each request, null where it costs its cost
     * @param ended the variables of the call once it ended
     * @return the charges in the order of the requests, or null when every one equals its cost
     */
    public long[] charges(List<LimitRequest> requests, List<Expression> chargeOf, EvaluationContext ended) {
        long[] charges = null;
        for (int i = 0; i < requests.size(); i++) {
            Expression expression = chargeOf.get(i);
            long cost = requests.get(i).cost();
            if (expression == null) {
                continue;
            }
            Long charge;
            try {
                charge = expression.getValue(ended, Long.class);
            }
            catch (RuntimeException ex) {
                failed(requests.get(i), expression, "failed: " + ex.getMessage());
                continue;
            }
            if (charge == null || charge < 0) {
                failed(requests.get(i), expression, "gave " + charge + ", not a number of permits (0 or more)");
                continue;
            }
            if (charge != cost) {
                if (charges == null) {
                    charges = new long[requests.size()];
                    for (int j = 0; j < charges.length; j++) {
                        charges[j] = requests.get(j).cost();
                    }
                }
                charges[i] = charge;
            }
        }
        return charges;
    }

    /**
     * Accounts for a settle: counts and logs one the backend refused (the call stays at its cost),
     * else shows the settled counts in the request's RateLimit headers, if it has them.
     * @param requests what the call was admitted for
     * @param chargeOf the charge of each request, null where it costs its cost
     * @param taken the admission
     * @param charges what each limit charged
     * @param failure why the settle failed, or null
     * @param web the request the call serves, or null
     */
    public void settled(List<LimitRequest> requests, List<Expression> chargeOf, Decisions taken, long[] charges,
            RuntimeException failure, InboundCall web) {
        if (failure != null) {
            for (int i = 0; i < requests.size(); i++) {
                if (charges[i] != requests.get(i).cost()) {
                    failed(requests.get(i), chargeOf.get(i), "could not be settled (" + failure.getMessage() + ")",
                            timedOut(failure)
                                    ? "the backend may still apply it; until it does, the call counts at its cost"
                                    : "the call stays counted at its cost");
                }
            }
            return;
        }
        if (web != null) {
            List<Decision> settled = new ArrayList<>(requests.size());
            for (int i = 0; i < requests.size(); i++) {
                Decision admitted = taken.get(i);
                long remaining = Math.max(0, Math.min(admitted.limit(),
                        admitted.remaining() - (charges[i] - requests.get(i).cost())));
                // A key with its whole quota free holds nothing that could reset.
                long resetAfter = (remaining == admitted.limit()) ? 0 : admitted.resetAfterMillis();
                settled.add(new Decision(true, admitted.limit(), remaining, 0, resetAfter));
            }
            web.record(requests, new Decisions(true, settled, taken.decidedAtMillis(), taken.generation(),
                    taken.parts()));
        }
    }

    /** Whether the settle timed out: sent, but not confirmed in time, so the server may still apply it. */
    private static boolean timedOut(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof LateFailure) {
                return true;
            }
        }
        return false;
    }

    private void failed(LimitRequest request, Expression charge, String problem) {
        failed(request, charge, problem, "the call stays counted at its cost");
    }

    private void failed(LimitRequest request, Expression charge, String problem, String consequence) {
        String name = request.limit().name();
        this.registry.get().statistics(name).recordChargeError();
        if (this.warned.add(name)) {
            logger.warn("The charge '" + charge.getExpressionString() + "' of limit '" + name + "' " + problem
                    + ": " + consequence + ". Counted in limiter.charge.errors{limit=" + name
                    + "}; logged once per limit.");
        }
    }

}
