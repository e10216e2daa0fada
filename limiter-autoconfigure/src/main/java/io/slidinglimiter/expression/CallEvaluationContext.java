package io.slidinglimiter.expression;

import java.util.List;

import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;

/**
 * The context of one evaluation: the variables of one call over the parser's shared resolvers,
 * so nothing but this small object is created per call. Read-only: expressions cannot assign
 * variables.
 */
public abstract class CallEvaluationContext implements EvaluationContext {

    private final EvaluationContext shared;

    protected CallEvaluationContext(LimiterExpressionParser parser) {
        this.shared = parser.shared();
    }

    @Override
    public abstract Object lookupVariable(String name);

    @Override
    public void setVariable(String name, Object value) {
        throw new UnsupportedOperationException("Rate-limit expressions cannot set variables");
    }

    @Override
    public boolean isAssignmentEnabled() {
        return false;
    }

    @Override
    public TypedValue getRootObject() {
        return TypedValue.NULL;
    }

    @Override
    public List<PropertyAccessor> getPropertyAccessors() {
        return this.shared.getPropertyAccessors();
    }

    @Override
    public List<IndexAccessor> getIndexAccessors() {
        return this.shared.getIndexAccessors();
    }

    @Override
    public List<ConstructorResolver> getConstructorResolvers() {
        return this.shared.getConstructorResolvers();
    }

    @Override
    public List<MethodResolver> getMethodResolvers() {
        return this.shared.getMethodResolvers();
    }

    @Override
    public BeanResolver getBeanResolver() {
        return this.shared.getBeanResolver();
    }

    @Override
    public TypeLocator getTypeLocator() {
        return this.shared.getTypeLocator();
    }

    @Override
    public TypeConverter getTypeConverter() {
        return this.shared.getTypeConverter();
    }

    @Override
    public TypeComparator getTypeComparator() {
        return this.shared.getTypeComparator();
    }

    @Override
    public OperatorOverloader getOperatorOverloader() {
        return this.shared.getOperatorOverloader();
    }

}
