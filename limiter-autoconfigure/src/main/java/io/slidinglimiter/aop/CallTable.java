package io.slidinglimiter.aop;

import java.lang.reflect.Method;

/**
 * Methods by identity, in an open-addressed table.
 * <p>
 * Methods by identity, in an open-addressed table at most half full, hashed by the method's name
 * (a String that keeps its hash) and parameter count rather than by identity hash: an
 * {@code IdentityHashMap} here cost the annotated call about 7 ns more (BENCHMARKS.md).
 * Immutable: a new method makes a new table.
 */
final class CallTable {

    /** A method's operation, for objects of one class. */
    record Resolved(Class<?> runtimeClass, RateLimitedOperation operation) {
    }

    static final CallTable EMPTY = new CallTable(new Method[2], new Resolved[2][]);

    private final Method[] methods;

    private final Resolved[][] resolved;

    private CallTable(Method[] methods, Resolved[][] resolved) {
        this.methods = methods;
        this.resolved = resolved;
    }

    Resolved[] get(Method method) {
        int mask = this.methods.length - 1;
        for (int i = slot(method, mask); ; i = (i + 1) & mask) {
            Method candidate = this.methods[i];
            if (candidate == method) {
                return this.resolved[i];
            }
            if (candidate == null) {
                return null;
            }
        }
    }

    /** This table with {@code method} mapped to {@code operations}, at most half full. */
    CallTable with(Method method, Resolved[] operations) {
        int size = 1;
        for (Method known : this.methods) {
            if (known != null && known != method) {
                size++;
            }
        }
        int capacity = Math.max(2, Integer.highestOneBit(size * 2 - 1) << 1);
        CallTable table = new CallTable(new Method[capacity], new Resolved[capacity][]);
        for (int i = 0; i < this.methods.length; i++) {
            if (this.methods[i] != null && this.methods[i] != method) {
                table.put(this.methods[i], this.resolved[i]);
            }
        }
        table.put(method, operations);
        return table;
    }

    private void put(Method method, Resolved[] operations) {
        int mask = this.methods.length - 1;
        int i = slot(method, mask);
        while (this.methods[i] != null) {
            i = (i + 1) & mask;
        }
        this.methods[i] = method;
        this.resolved[i] = operations;
    }

    private static int slot(Method method, int mask) {
        int hash = method.getName().hashCode() * 31 + method.getParameterCount();
        return (hash ^ (hash >>> 16)) & mask;
    }

}
