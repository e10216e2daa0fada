package io.slidinglimiter.autoconfigure;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import com.google.rpc.RetryInfo;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.protobuf.ProtoUtils;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.service.GrpcServiceDiscoverer;
import org.springframework.grpc.server.service.GrpcServiceSpec;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

import io.slidinglimiter.RateLimiters;
import io.slidinglimiter.aop.RateLimitedOperationSource;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.InvalidLimiterConfigurationException.Problem;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.expression.PlanExpression;
import io.slidinglimiter.grpc.GrpcRateLimitContext;
import io.slidinglimiter.grpc.GrpcRateLimitInterceptor;
import io.slidinglimiter.grpc.GrpcRule;

/**
 * gRPC services served by Spring gRPC: {@link GrpcRateLimitInterceptor} as a global server
 * interceptor, with the rules of {@code limiter.grpc.rules}. A rule that names an undefined limit,
 * whose key is not valid, or whose method no service of the application serves fails the start.
 */
@AutoConfiguration(after = LimiterAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "limiter.enabled", matchIfMissing = true)
@ConditionalOnClass({ GlobalServerInterceptor.class, ServerInterceptor.class, ProtoUtils.class, RetryInfo.class })
@ConditionalOnBean(RateLimiters.class)
public class LimiterGrpcAutoConfiguration {

    /** {@code package.Service/Method} or {@code package.Service/*}. */
    private static final Pattern METHOD = Pattern.compile("[A-Za-z_][\\w.]*/([A-Za-z_]\\w*|\\*)");

    @Bean
    @GlobalServerInterceptor
    @Order(GrpcRateLimitInterceptor.ORDER)
    GrpcRateLimitInterceptor limiterGrpcInterceptor(LimiterProperties properties, RateLimiters rateLimiters,
            LimiterExpressionParser parser, ObjectProvider<GrpcServiceDiscoverer> services,
            ObjectProvider<RateLimitedOperationSource> operations) {
        // Read at the first call, once every service is known; a service it does not know may be limited.
        Supplier<Set<String>> unannotated = SingletonSupplier
            .of(() -> unannotatedServices(services.getIfAvailable(), operations.getIfAvailable()));
        return new GrpcRateLimitInterceptor(rules(properties, rateLimiters, parser), rateLimiters, parser,
                (service) -> !unannotated.get().contains(service), properties.getGrpc().isHeaders());
    }

    /**
     * The services, by name, none of whose methods is rate-limited by annotation (none is when the
     * annotation's advisor is off).
     */
    private static Set<String> unannotatedServices(GrpcServiceDiscoverer discoverer,
            RateLimitedOperationSource operations) {
        Set<String> unannotated = new HashSet<>();
        if (discoverer == null) {
            return unannotated;
        }
        for (GrpcServiceSpec spec : discoverer.findServices()) {
            Class<?> type = AopUtils.getTargetClass(spec.service());
            boolean annotated = operations != null && Arrays.stream(ReflectionUtils.getAllDeclaredMethods(type))
                .anyMatch((method) -> operations.isRateLimited(method, type));
            if (!annotated) {
                unannotated.add(spec.service().bindService().getServiceDescriptor().getName());
            }
        }
        return unannotated;
    }

    @Bean
    static SmartInitializingSingleton limiterGrpcRuleCheck(ObjectProvider<LimiterProperties> properties,
            ObjectProvider<GrpcServiceDiscoverer> services) {
        return () -> {
            GrpcServiceDiscoverer discoverer = services.getIfAvailable();
            List<LimiterProperties.GrpcRule> rules = properties.getObject().getGrpc().getRules();
            if (discoverer == null || rules.isEmpty()) {
                return;
            }
            Set<String> served = new TreeSet<>();
            for (GrpcServiceSpec spec : discoverer.findServices()) {
                for (ServerMethodDefinition<?, ?> method : spec.service().bindService().getMethods()) {
                    served.add(method.getMethodDescriptor().getFullMethodName());
                }
            }
            List<Problem> problems = new ArrayList<>();
            for (int i = 0; i < rules.size(); i++) {
                String method = rules.get(i).getMethod();
                if (served.stream().noneMatch((name) -> GrpcRule.matches(method, name))) {
                    String prefix = "limiter.grpc.rules[" + i + "].method";
                    problems.add(new Problem(prefix, "names '" + method + "', which no gRPC service of the"
                            + " application serves, so the rule would never apply",
                            "Set " + prefix + " to one of " + served + " (or a service's name followed by /*)."));
                }
            }
            if (!problems.isEmpty()) {
                throw new InvalidLimiterConfigurationException(problems);
            }
        };
    }

    /** The rules of {@code limiter.grpc.rules}, compiled; fails the start naming each bad entry. */
    static List<GrpcRule> rules(LimiterProperties properties, RateLimiters rateLimiters,
            LimiterExpressionParser parser) {
        List<GrpcRule> rules = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        List<LimiterProperties.GrpcRule> configured = properties.getGrpc().getRules();
        for (int i = 0; i < configured.size(); i++) {
            LimiterProperties.GrpcRule rule = configured.get(i);
            String prefix = "limiter.grpc.rules[" + i + "]";
            int before = problems.size();
            if (rule.getLimit() == null || !ConfiguredLimits.isDefined(rateLimiters, rule.getLimit())) {
                problems.add(new Problem(prefix + ".limit", (rule.getLimit() == null) ? "is missing"
                        : "names '" + rule.getLimit() + "', which is not under limiter.limits",
                        "Set " + prefix + ".limit to one of " + properties.getLimits().keySet()
                                + " or define it under limiter.limits."));
            }
            String method = (rule.getMethod() != null) ? rule.getMethod().trim() : "";
            if (!METHOD.matcher(method).matches()) {
                problems.add(new Problem(prefix + ".method", method.isEmpty() ? "is missing"
                        : "'" + method + "' is not a full gRPC method name",
                        "Set " + prefix + ".method to package.Service/Method (as in the .proto file), or"
                                + " package.Service/* for every method of the service."));
            }
            KeyExpression key = null;
            try {
                key = new KeyExpression((rule.getKey() == null || rule.getKey().isBlank()) ? null
                        : parser.parse(rule.getKey(), GrpcRateLimitContext.KEY_VARIABLES), prefix,
                        properties.getEmptyKey() == LimiterProperties.EmptyKey.ALLOW);
            }
            catch (InvalidExpressionException ex) {
                problems.add(new Problem(prefix + ".key", "key expression " + ex.getMessage(),
                        "Write the key over #metadata and #clientAddress, for example \"#metadata['x-api-key']\"."));
            }
            PlanExpression plan = ConfiguredLimits.plan(properties.getLimits().get(rule.getLimit()), rule.getLimit(), prefix,
                    parser, GrpcRateLimitContext.KEY_VARIABLES, "#metadata and #clientAddress", problems);
            if (problems.size() == before) {
                rules.add(new GrpcRule(rule.getLimit(), method, key, plan));
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        return rules;
    }

}
