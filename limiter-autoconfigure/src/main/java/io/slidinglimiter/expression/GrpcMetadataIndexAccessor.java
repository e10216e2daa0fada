package io.slidinglimiter.expression;

import io.grpc.Metadata;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.TypedValue;

/**
 * Reads a gRPC call's metadata by name in expressions: {@code #metadata['x-api-key']} is the text
 * value of that entry, or null when the call has none; binary entries ({@code -bin}) read as null.
 * Registered only when gRPC is on the class path.
 */
final class GrpcMetadataIndexAccessor implements IndexAccessor {

    @Override
    public Class<?>[] getSpecificTargetClasses() {
        return new Class<?>[] { Metadata.class };
    }

    @Override
    public boolean canRead(EvaluationContext context, Object target, Object index) {
        return target instanceof Metadata && index instanceof String;
    }

    @Override
    public TypedValue read(EvaluationContext context, Object target, Object index) {
        String name = (String) index;
        if (name.isEmpty() || name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
            return TypedValue.NULL;
        }
        try {
            return new TypedValue(((Metadata) target).get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER)));
        }
        catch (IllegalArgumentException ex) {
            // Not a legal metadata name: no call can carry it.
            return TypedValue.NULL;
        }
    }

    @Override
    public boolean canWrite(EvaluationContext context, Object target, Object index) {
        return false;
    }

    @Override
    public void write(EvaluationContext context, Object target, Object index, Object newValue) {
        throw new UnsupportedOperationException("Metadata is read-only in expressions");
    }

}
