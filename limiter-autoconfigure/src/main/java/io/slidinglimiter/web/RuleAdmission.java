package io.slidinglimiter.web;

import java.util.List;

import org.springframework.expression.Expression;

import io.slidinglimiter.core.Decisions;
import io.slidinglimiter.core.LimitRequest;

/**
 * What the URL rules that matched a request admitted it for, kept until the response is known
 * when a rule settles its charge then.
 *
 * @param requests the rules' requests
 * @param charges the charge of each request, null where it costs one permit
 * @param taken the admission
 */
record RuleAdmission(List<LimitRequest> requests, List<Expression> charges, Decisions taken) {

    /**
     * Whether any of the charges needs settling after the response.
     * @param charges the charge of each request, null where it costs one permit
     * @return true when one is set
     */
    static boolean anyCharged(List<Expression> charges) {
        for (Expression charge : charges) {
            if (charge != null) {
                return true;
            }
        }
        return false;
    }

}
