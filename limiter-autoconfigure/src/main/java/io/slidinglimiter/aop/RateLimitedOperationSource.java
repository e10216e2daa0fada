package io.slidinglimiter.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.slidinglimiter.annotation.RateLimited;
import io.slidinglimiter.config.InvalidLimiterConfigurationException;
import io.slidinglimiter.config.LimitPropertyNames;
import io.slidinglimiter.core.Algorithm;
import io.slidinglimiter.core.InvalidLimitException;
import io.slidinglimiter.core.LimitDefinition;
import io.slidinglimiter.core.LimitRegistry;
import io.slidinglimiter.expression.InvalidExpressionException;
import io.slidinglimiter.expression.KeyExpression;
import io.slidinglimiter.expression.LimiterExpressionParser;
import io.slidinglimiter.expression.PlanExpression;

/**
 * Resolves the {@code @RateLimited} annotations of a method once.
 * <p>
 * Finds them (on the method, else
 * on its type for public methods), decides each limit's definition (configuration first, then the
 * inline attributes), parses and checks its expressions, and caches the result.
 */
public final class RateLimitedOperationSource {

    /** An expression that is one variable and nothing more: {@code #userId}. */
    private static final Pattern VARIABLE = Pattern.compile("#([A-Za-z_$][A-Za-z0-9_$]*)");

    private static final Set<String> CALL_VARIABLES = Set.of("request", "principal", "clientAddress", "method",
            "args");

    /** What a gRPC service implements: generated base classes and hand-written services alike. */
    private static final String GRPC_SERVICE = "io.grpc.BindableService";

    private final LimitRegistry registry;

    private final Set<String> configuredLimits;

    private final int defaultSubWindows;

    private final LimiterExpressionParser parser;

    private final boolean allowEmptyKeys;

    private final Map<String, String> configuredCharges;

    private final Map<String, String> configuredPlans;

    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

    private final ConcurrentMap<MethodClassKey, Optional<RateLimitedOperation>> operations = new ConcurrentHashMap<>();

    /**
     * The same answers by the identity of the method and of the called object's class, for the call
     * path: {@code Method.equals} compares parameter types, and that showed in profiles. Copied on
     * write; written once per method and class.
     */
    private volatile CallTable byIdentity = CallTable.EMPTY;

    /** The class that first used each default name ({@code SimpleClassName.method}). */
    private final ConcurrentMap<String, String> defaultNameOwners = new ConcurrentHashMap<>();

    /**
     * Creates the source.
     * @param registry the application's limits; inline definitions are added to it
     * @param configuredLimits the names under {@code limiter.limits}, which win over inline attributes
     * @param defaultSubWindows the sub-windows of an inline limit that does not say
     * @param parser the expression parser
     * @param allowEmptyKeys whether a call whose key is null or blank bypasses the limit (else it is denied)
     * @param configuredCharges {@code limiter.limits.<name>.charge} by limit name, which win over the
     * annotation's {@code charge}
     * @param configuredPlans {@code limiter.limits.<name>.plan} by limit name, which win over the
     * annotation's {@code plan}
     */
    public RateLimitedOperationSource(LimitRegistry registry, Set<String> configuredLimits, int defaultSubWindows,
            LimiterExpressionParser parser, boolean allowEmptyKeys, Map<String, String> configuredCharges,
            Map<String, String> configuredPlans) {
        this.registry = registry;
        this.configuredLimits = Set.copyOf(configuredLimits);
        this.defaultSubWindows = defaultSubWindows;
        this.parser = parser;
        this.allowEmptyKeys = allowEmptyKeys;
        this.configuredCharges = Map.copyOf(configuredCharges);
        this.configuredPlans = Map.copyOf(configuredPlans);
    }

    /**
     * Whether a call of {@code method} on {@code targetClass} is rate-limited.
     * @param method the method called
     * @param targetClass the class of the object called, or null
     * @return {@code true} if it carries {@code @RateLimited}, directly or through its type
     */
    public boolean isRateLimited(Method method, Class<?> targetClass) {
        return !RateLimitedPointcut.annotationsOf(method, targetClass).isEmpty();
    }

    /**
     * The operation of a method, resolved on first use and cached.
     * @param method the method called
     * @param targetClass the class of the object called, or null
     * @return the operation, or null if the method is not rate-limited
     * @throws InvalidLimiterConfigurationException if its annotations cannot work
     */
    public RateLimitedOperation operationFor(Method method, Class<?> targetClass) {
        return resolveCached(method, targetClass);
    }

    /**
     * The operation of one call, by the identity of the method and of the called object's class:
     * the call path's look-up.
     * @param method the method called
     * @param target the object called, or null
     * @return the operation, or null if the method is not rate-limited
     * @throws InvalidLimiterConfigurationException if its annotations cannot work
     */
    public RateLimitedOperation operationOfCall(Method method, Object target) {
        Class<?> runtimeClass = (target != null) ? target.getClass() : null;
        CallTable.Resolved[] known = this.byIdentity.get(method);
        if (known != null) {
            for (CallTable.Resolved resolved : known) {
                if (resolved.runtimeClass() == runtimeClass) {
                    return resolved.operation();
                }
            }
        }
        RateLimitedOperation operation = resolveCached(method,
                (target != null) ? AopUtils.getTargetClass(target) : null);
        synchronized (this) {
            CallTable.Resolved[] previous = this.byIdentity.get(method);
            CallTable.Resolved[] extended = (previous != null) ? Arrays.copyOf(previous, previous.length + 1) : new CallTable.Resolved[1];
            extended[extended.length - 1] = new CallTable.Resolved(runtimeClass, operation);
            this.byIdentity = this.byIdentity.with(method, extended);
        }
        return operation;
    }

    private RateLimitedOperation resolveCached(Method method, Class<?> targetClass) {
        MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
        Optional<RateLimitedOperation> operation = this.operations.get(cacheKey);
        if (operation == null) {
            operation = this.operations.computeIfAbsent(cacheKey,
                    (key) -> Optional.ofNullable(resolve(method, targetClass)));
        }
        return operation.orElse(null);
    }

    private RateLimitedOperation resolve(Method method, Class<?> targetClass) {
        Method specific = RateLimitedPointcut.specificMethod(method, targetClass);
        Class<?> userClass = ClassUtils.getUserClass((targetClass != null) ? targetClass : specific.getDeclaringClass());
        List<RateLimited> annotations = RateLimitedPointcut.annotationsOf(specific, userClass);
        if (annotations.isEmpty()) {
            return null;
        }
        String description = "@RateLimited on " + describe(specific, userClass);
        Map<String, Integer> parameterIndex = parameterIndex(specific);
        Set<String> variables = new HashSet<>(CALL_VARIABLES);
        if (isGrpcService(userClass)) {
            variables.add("metadata");
        }
        variables.addAll(parameterIndex.keySet());
        List<LimitOperation> limits = new ArrayList<>();
        Set<String> names = new HashSet<>();
        List<InvalidLimiterConfigurationException.Problem> problems = new ArrayList<>();
        for (RateLimited annotation : annotations) {
            try {
                LimitOperation limit = limitOperation(annotation, specific, userClass, description, variables,
                        parameterIndex);
                if (!names.add(limit.limitName())) {
                    throw problem(description, "limit '" + limit.limitName() + "' is applied twice",
                            "Apply each limit once per method.");
                }
                limits.add(limit);
            }
            catch (InvalidLimiterConfigurationException ex) {
                problems.addAll(ex.getProblems());
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidLimiterConfigurationException(problems);
        }
        boolean stage = RateLimitedMethodsValidator.returnsStage(method);
        boolean async = RateLimitedMethodsValidator.isAsync(specific, userClass);
        return new RateLimitedOperation(limits, new ParameterIndex(parameterIndex),
                ReactiveCalls.subscribed(specific),
                limits.stream().anyMatch((limit) -> limit.charge() != null), stage, stage && !async);
    }

    private LimitOperation limitOperation(RateLimited annotation, Method method, Class<?> userClass,
            String description, Set<String> variables, Map<String, Integer> parameterIndex) {
        String name = limitName(annotation, method, userClass, description);
        LimitDefinition definition = definition(name, annotation, description);
        KeyExpression key = keyExpression(annotation.key(), method, description, variables, parameterIndex);
        Expression condition = expression(annotation.condition(), "condition", description, variables);
        Expression charge = chargeExpression(name, annotation, method, description, variables);
        PlanExpression plan = planExpression(name, annotation, description, variables);
        LimitRegistry.Handle handle = this.registry.handle(name);
        // With plans, a cost above the limit's own quota may still fit a plan's.
        long largest = (plan != null) ? Math.max(definition.limit(), handle.largestLimit()) : definition.limit();
        String cost = annotation.cost().trim();
        if (cost.matches("\\d{1,18}")) {
            long constantCost = Long.parseLong(cost);
            if (constantCost < 1 || constantCost > largest) {
                throw problem(description, "cost " + constantCost + " of limit '" + name
                        + "' is outside 1.." + largest + ", so no call could ever be admitted",
                        "Set cost to a number between 1 and the limit, or to an expression.");
            }
            return new LimitOperation(handle, key, constantCost, null, condition, charge, plan);
        }
        Expression costExpression = expression(cost, "cost", description, variables);
        checkLiteral(costExpression, "cost", description, name, 1, largest);
        return new LimitOperation(handle, key, 0, costExpression, condition, charge, plan);
    }

    /**
     * The key: read from the call's arguments when it is one {@code String} parameter and nothing
     * more ({@code #userId}, {@code #p0}), else evaluated.
     */
    private KeyExpression keyExpression(String source, Method method, String description, Set<String> variables,
            Map<String, Integer> parameterIndex) {
        Expression expression = expression(source, "key", description, variables);
        Matcher variable = VARIABLE.matcher(source.trim());
        Integer parameter = variable.matches() ? parameterIndex.get(variable.group(1)) : null;
        if (parameter != null && method.getParameterTypes()[parameter] == String.class) {
            return KeyExpression.ofParameter(expression, parameter, description, this.allowEmptyKeys);
        }
        return new KeyExpression(expression, description, this.allowEmptyKeys);
    }

    /**
     * The plan, from {@code limiter.limits.<name>.plan} or else the annotation; null when every call
     * has the limit's own quota.
     */
    private PlanExpression planExpression(String name, RateLimited annotation, String description,
            Set<String> variables) {
        String configured = this.configuredPlans.get(name);
        boolean fromConfiguration = configured != null && !configured.isBlank();
        String attribute = fromConfiguration ? "plan (" + LimitPropertyNames.of(name) + ".plan)" : "plan";
        Expression plan = expression(fromConfiguration ? configured : annotation.plan(), attribute, description,
                variables);
        return (plan != null) ? new PlanExpression(plan, description) : null;
    }

    private String limitName(RateLimited annotation, Method method, Class<?> userClass, String description) {
        String name = annotation.name().trim();
        String value = annotation.value().trim();
        if (!name.isEmpty() && !value.isEmpty() && !name.equals(value)) {
            throw problem(description, "name '" + name + "' and value '" + value + "' disagree",
                    "Set either name or value, not both.");
        }
        if (!name.isEmpty() || !value.isEmpty()) {
            return name.isEmpty() ? value : name;
        }
        String defaultName = userClass.getSimpleName() + "." + method.getName();
        if (isOverloaded(method, userClass)) {
            // Each overload counts apart: Orders.place(String) and Orders.place(int).
            defaultName += parameterList(method);
        }
        String owner = this.defaultNameOwners.putIfAbsent(defaultName, userClass.getName());
        if (owner != null && !owner.equals(userClass.getName())) {
            throw problem(description, "its default limit name '" + defaultName + "' is also the default name of "
                    + owner + "." + method.getName() + ", and the two would share counters",
                    "Give one of the two limits a name with @RateLimited(name = \"...\").");
        }
        return defaultName;
    }

    private LimitDefinition definition(String name, RateLimited annotation, String description) {
        if (this.configuredLimits.contains(name)) {
            return this.registry.get(name);
        }
        boolean hasLimit = annotation.limit() != -1;
        boolean hasWindow = !annotation.window().isBlank();
        if (!hasLimit && !hasWindow) {
            Optional<LimitDefinition> elsewhere = this.registry.find(name);
            if (elsewhere.isPresent()) {
                return elsewhere.get();
            }
            throw problem(description, "no limit is named '" + name + "'",
                    "Define " + LimitPropertyNames.of(name) + ".limit and .window, or set limit and window on the"
                            + " annotation.");
        }
        if (!hasLimit || !hasWindow) {
            throw problem(description, "limit '" + name + "' sets " + (hasLimit ? "limit but not window"
                    : "window but not limit"), "Set both limit and window, or define " + LimitPropertyNames.of(name) + ".");
        }
        Duration window;
        try {
            window = DurationStyle.detectAndParse(annotation.window().trim());
        }
        catch (IllegalArgumentException ex) {
            throw problem(description, "window '" + annotation.window() + "' of limit '" + name
                    + "' is not a duration", "Write the window like 1s, 500ms, 1m or PT1H.");
        }
        int subWindows = (annotation.subWindows() == -1) ? this.defaultSubWindows : annotation.subWindows();
        try {
            return this.registry.register(new LimitDefinition(name, annotation.limit(), window, subWindows,
                    Algorithm.SLIDING_WINDOW_COUNTER));
        }
        catch (InvalidLimitException ex) {
            throw problem(description, ex.getMessage(), switch (ex.getField()) {
                case LIMIT -> "Set limit to a number of permits greater than 0.";
                case SUB_WINDOWS -> "Set subWindows between 1 and " + LimitDefinition.MAX_SUB_WINDOWS + ".";
                default -> "Use a positive window that divides into the sub-windows in whole milliseconds.";
            });
        }
        catch (IllegalStateException ex) {
            throw problem(description, ex.getMessage(),
                    "Give every inline definition of a name the same values, or define it once under "
                            + LimitPropertyNames.of(name) + ".");
        }
    }

    private Expression expression(String source, String attribute, String description, Set<String> variables) {
        if (source == null || source.isBlank()) {
            return null;
        }
        try {
            return this.parser.parse(source, variables);
        }
        catch (InvalidExpressionException ex) {
            throw problem(description, attribute + " expression " + ex.getMessage(),
                    "Refer to the method's parameters by name (compile with -parameters) or as #p0, #a0;"
                            + " or to #request, #principal, #method, #args and existing @beans (and, in a gRPC"
                            + " service, #metadata and #clientAddress).");
        }
    }

    /**
     * The charge, from {@code limiter.limits.<name>.charge} or else the annotation, with
     * {@code #result} (not for a method that returns nothing) and {@code #exception} besides the
     * call's variables; null when the call costs its cost.
     */
    private Expression chargeExpression(String name, RateLimited annotation, Method method, String description,
            Set<String> variables) {
        String configured = this.configuredCharges.get(name);
        String source = (configured != null && !configured.isBlank()) ? configured : annotation.charge();
        if (source.isBlank()) {
            return null;
        }
        String attribute = (configured != null && !configured.isBlank())
                ? "charge (" + LimitPropertyNames.of(name) + ".charge)" : "charge";
        Set<String> settled = new HashSet<>(variables);
        settled.add("exception");
        boolean returnsNothing = method.getReturnType() == void.class || method.getReturnType() == Void.class;
        if (!returnsNothing) {
            settled.add("result");
        }
        try {
            Expression charge = this.parser.parse(source, settled);
            checkLiteral(charge, attribute, description, name, 0, Long.MAX_VALUE);
            return charge;
        }
        catch (InvalidExpressionException ex) {
            throw problem(description, attribute + " expression " + ex.getMessage(), returnsNothing
                    ? "The method returns nothing, so there is no #result: charge by #exception or the"
                            + " parameters, or return the value to charge by."
                    : "Refer to #result, #exception, the method's parameters, #request, #principal, #method,"
                            + " #args and existing @beans.");
        }
    }

    /**
     * An expression that is a literal ({@code "'abc'"}, {@code "'0'"}) gives the same value on every
     * call: one that is not a number of permits within bounds is the developer's error, reported at
     * start rather than to every caller.
     */
    private static void checkLiteral(Expression expression, String attribute, String description, String name,
            long min, long max) {
        if (!(expression instanceof SpelExpression spel) || !(spel.getAST() instanceof Literal)) {
            return;
        }
        Long value;
        try {
            value = expression.getValue(Long.class);
        }
        catch (RuntimeException ex) {
            value = null;
        }
        if (value == null || value < min || value > max) {
            throw problem(description, attribute + " '" + expression.getExpressionString() + "' of limit '" + name
                    + "' is a literal that is not a number of permits from " + min
                    + ((max == Long.MAX_VALUE) ? " up" : " to " + max), "Write " + attribute
                            + " as a whole number, or as an expression over the call that gives one.");
        }
    }

    private Map<String, Integer> parameterIndex(Method method) {
        Map<String, Integer> index = new HashMap<>();
        String[] names = this.parameterNames.getParameterNames(method);
        for (int i = 0; i < method.getParameterCount(); i++) {
            // Interned: a compiled expression asks for its variables by constant names (ParameterIndex).
            index.put(("p" + i).intern(), i);
            index.put(("a" + i).intern(), i);
            // A Kotlin suspend function's names leave out its last parameter, the continuation.
            if (names != null && i < names.length) {
                index.putIfAbsent(names[i].intern(), i);
            }
        }
        return index;
    }

    /** Whether the class serves gRPC: its methods' keys see the call's {@code #metadata}. */
    private static boolean isGrpcService(Class<?> userClass) {
        ClassLoader loader = userClass.getClassLoader();
        if (!ClassUtils.isPresent(GRPC_SERVICE, loader)) {
            return false;
        }
        return ClassUtils.isAssignable(ClassUtils.resolveClassName(GRPC_SERVICE, loader), userClass);
    }

    /** A method as start-up errors name it: {@code com.example.Orders.place(String, int)}. */
    static String describe(Method method, Class<?> userClass) {
        return userClass.getName() + "." + method.getName() + parameterList(method);
    }

    private static String parameterList(Method method) {
        return "(" + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                .collect(Collectors.joining(", ")) + ")";
    }

    private static boolean isOverloaded(Method method, Class<?> userClass) {
        return Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(userClass, ReflectionUtils.USER_DECLARED_METHODS))
                .filter((candidate) -> candidate.getName().equals(method.getName())).count() > 1;
    }

    private static InvalidLimiterConfigurationException problem(String subject, String reason, String action) {
        return new InvalidLimiterConfigurationException(subject, reason, action);
    }

}
