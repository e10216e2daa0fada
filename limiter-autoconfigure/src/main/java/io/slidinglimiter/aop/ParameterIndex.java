package io.slidinglimiter.aop;

import java.util.Map;

/**
 * A method's parameters by the names expressions use ({@code userId}, {@code p0}, {@code a0}), for
 * the call path.
 * <p>
 * Names are interned, and a compiled expression asks for its variables by constant
 * (interned) names, so a look-up is a scan of a few references before any {@code equals}.
 */
final class ParameterIndex {

    private final String[] names;

    private final int[] indexes;

    /**
     * Indexes parameters.
     * @param byName each name's parameter position
     */
    public ParameterIndex(Map<String, Integer> byName) {
        this.names = new String[byName.size()];
        this.indexes = new int[byName.size()];
        int i = 0;
        for (Map.Entry<String, Integer> entry : byName.entrySet()) {
            this.names[i] = entry.getKey().intern();
            this.indexes[i] = entry.getValue();
            i++;
        }
    }

    /**
     * The position of the parameter a name refers to.
     * @param name a variable's name
     * @return its position, or -1 when no parameter has that name
     */
    public int indexOf(String name) {
        for (int i = 0; i < this.names.length; i++) {
            if (this.names[i] == name) {
                return this.indexes[i];
            }
        }
        for (int i = 0; i < this.names.length; i++) {
            if (this.names[i].equals(name)) {
                return this.indexes[i];
            }
        }
        return -1;
    }

}
