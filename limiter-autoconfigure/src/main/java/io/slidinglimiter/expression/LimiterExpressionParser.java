package io.slidinglimiter.expression;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.util.ClassUtils;

/**
 * Parses the SpEL of keys, costs, conditions once, when the application starts.
 * <p>
 * Parses the SpEL of keys, costs and conditions once, when the application starts, and checks that
 * every {@code #variable} it refers to is one the call will offer and every {@code @bean} exists.
 * Expressions run in SpEL's mixed mode: interpreted at first, compiled to bytecode once warm.
 */
public final class LimiterExpressionParser {

    private final SpelExpressionParser parser;

    private final BeanFactory beanFactory;

    private final StandardEvaluationContext shared;

    /** The expressions parsed so far that read the client's address, for the start-up check of forwarded headers. */
    private final Set<String> readingClientAddress = new ConcurrentSkipListSet<>();

    /** What reads a request's client address: the variable, and the requests' own accessors. */
    private static final Set<String> CLIENT_ADDRESS_READS = Set.of("#clientAddress", "remoteAddr", "remoteAddress",
            "getRemoteAddr", "getRemoteAddress", "remoteHost", "getRemoteHost");

    /**
     * Creates a parser.
     * @param beanFactory the factory that {@code @bean} references resolve in, or null for none
     * @param classLoader the class loader compiled expressions are defined in
     */
    public LimiterExpressionParser(BeanFactory beanFactory, ClassLoader classLoader) {
        this.parser = new SpelExpressionParser(new SpelParserConfiguration(SpelCompilerMode.MIXED, classLoader));
        this.beanFactory = beanFactory;
        this.shared = new StandardEvaluationContext();
        if (beanFactory != null) {
            this.shared.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        if (ClassUtils.isPresent("io.grpc.Metadata", classLoader)) {
            // #metadata['x-api-key'] in the keys of gRPC calls.
            this.shared.addIndexAccessor(new GrpcMetadataIndexAccessor());
        }
        // Initialize the lazily built parts now, so concurrent calls only ever read them.
        this.shared.getPropertyAccessors();
        this.shared.getMethodResolvers();
        this.shared.getConstructorResolvers();
        this.shared.getIndexAccessors();
        this.shared.getTypeLocator();
        this.shared.getTypeConverter();
    }

    /**
     * Parses an expression and checks its references.
     * @param source the expression
     * @param variables the names (without {@code #}) the call will offer
     * @return the parsed expression, safe to share between threads
     * @throws InvalidExpressionException describing the problem, without naming where the
     * expression came from
     */
    public Expression parse(String source, Set<String> variables) {
        Expression expression;
        try {
            expression = this.parser.parseExpression(source);
        }
        catch (ParseException ex) {
            throw new InvalidExpressionException("'" + source + "' is not valid SpEL: " + ex.getSimpleMessage()
                    + " (at position " + ex.getPosition() + ")");
        }
        List<String> problems = new ArrayList<>();
        if (expression instanceof SpelExpression spel) {
            checkReferences(spel.getAST(), variables, problems);
            if (readsClientAddress(spel.getAST())) {
                this.readingClientAddress.add(source);
            }
        }
        if (!problems.isEmpty()) {
            throw new InvalidExpressionException("'" + source + "' " + String.join("; ", problems));
        }
        return expression;
    }

    /**
     * The shared, read-only part of every evaluation: resolvers, converters and bean references.
     * @return the shared context; callers wrap it rather than change it
     */
    EvaluationContext shared() {
        return this.shared;
    }

    private void checkReferences(SpelNode node, Set<String> variables, List<String> problems) {
        if (node instanceof VariableReference) {
            String name = node.toStringAST().substring(1);
            if (!name.equals("this") && !name.equals("root") && !variables.contains(name)) {
                problems.add("refers to #" + name + ", which is not defined here; available: "
                        + describe(variables));
            }
        }
        else if (node instanceof BeanReference bean && this.beanFactory != null
                && !this.beanFactory.containsBean(bean.getName())) {
            problems.add("refers to bean @" + bean.getName() + ", which does not exist");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            checkReferences(node.getChild(i), variables, problems);
        }
    }

    /**
     * The expressions parsed so far that read the client's address ({@code #clientAddress}, or a
     * request's remote address or host): what a client can choose when forwarded headers are trusted.
     * @return their sources, sorted
     */
    public Set<String> readingClientAddress() {
        return Set.copyOf(this.readingClientAddress);
    }

    private static boolean readsClientAddress(SpelNode node) {
        String name = null;
        if (node instanceof VariableReference) {
            name = node.toStringAST();
        }
        else if (node instanceof PropertyOrFieldReference property) {
            name = property.getName();
        }
        else if (node instanceof MethodReference method) {
            name = method.getName();
        }
        if (name != null && CLIENT_ADDRESS_READS.contains(name)) {
            return true;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            if (readsClientAddress(node.getChild(i))) {
                return true;
            }
        }
        return false;
    }

    private static String describe(Set<String> variables) {
        List<String> named = new ArrayList<>();
        for (String variable : new TreeSet<>(variables)) {
            if (!variable.matches("[pa]\\d+")) {
                named.add("#" + variable);
            }
        }
        return String.join(", ", named) + (variables.contains("p0") ? " and #p0/#a0.. by position" : "");
    }

}
