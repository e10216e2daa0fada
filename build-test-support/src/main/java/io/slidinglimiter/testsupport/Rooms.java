package io.slidinglimiter.testsupport;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;

/**
 * The arrows between the types of one package, read from compiled classes by {@code jdeps}, for the
 * structure tests that keep rooms pointing one way.
 */
public final class Rooms {

    private Rooms() {
    }

    /**
     * Type to the types it uses, within one package, nested types folded into their top-level type.
     * @param classes a folder of compiled classes
     * @param packagePrefix the package, with its trailing dot
     * @return the arrows, read by {@code jdeps}
     */
    public static Map<String, Set<String>> arrows(Path classes, String packagePrefix) {
        Map<String, Set<String>> arrows = new TreeMap<>();
        for (String[] arrow : typeArrows(classes, packagePrefix)) {
            String from = topLevel(arrow[0]);
            String to = topLevel(arrow[1]);
            arrows.computeIfAbsent(from, (ignored) -> new TreeSet<>());
            if (!from.contains(".") && !to.contains(".") && !from.equals(to)) {
                arrows.get(from).add(to);
            }
        }
        return arrows;
    }

    /**
     * Package to the packages its types use, below a root package (sub-packages apart).
     * @param classes a folder of compiled classes
     * @param rootPrefix the root package, with its trailing dot
     * @return the arrows between packages, named without the root
     */
    public static Map<String, Set<String>> packageArrows(Path classes, String rootPrefix) {
        Map<String, Set<String>> arrows = new TreeMap<>();
        for (String[] arrow : typeArrows(classes, rootPrefix)) {
            String from = packageOf(arrow[0]);
            String to = packageOf(arrow[1]);
            arrows.computeIfAbsent(from, (ignored) -> new TreeSet<>());
            if (!from.equals(to)) {
                arrows.get(from).add(to);
            }
        }
        return arrows;
    }

    /** Each use of a type by a type, both below a prefix and named without it, as {@code jdeps} reads them. */
    private static List<String[]> typeArrows(Path classes, String prefix) {
        List<String[]> arrows = new ArrayList<>();
        for (String line : jdeps(classes).split("\n")) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length >= 3 && parts[1].equals("->") && parts[0].startsWith(prefix) && parts[2].startsWith(prefix)) {
                arrows.add(new String[] { parts[0].substring(prefix.length()), parts[2].substring(prefix.length()) });
            }
        }
        return arrows;
    }

    private static String packageOf(String type) {
        int dot = type.lastIndexOf('.');
        return (dot < 0) ? "" : type.substring(0, dot);
    }

    private static String jdeps(Path classes) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
        StringWriter out = new StringWriter();
        int status = jdeps.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "-verbose:class",
                "-filter:none", classes.toString());
        if (status != 0) {
            throw new IllegalStateException("jdeps failed: " + out);
        }
        return out.toString();
    }

    private static String topLevel(String type) {
        int nested = type.indexOf('$');
        return (nested < 0) ? type : type.substring(0, nested);
    }

    /**
     * Whether a type reaches another through the arrows, directly or through others.
     * @param arrows type to the types it uses
     * @param from the type that may reach
     * @param to the type it may reach
     * @return whether it does
     */
    public static boolean reaches(Map<String, Set<String>> arrows, String from, String to) {
        Deque<String> next = new ArrayDeque<>(List.of(from));
        Set<String> seen = new TreeSet<>();
        while (!next.isEmpty()) {
            String type = next.pop();
            if (seen.add(type)) {
                for (String used : arrows.getOrDefault(type, Set.of())) {
                    if (used.equals(to)) {
                        return true;
                    }
                    next.push(used);
                }
            }
        }
        return false;
    }

    /**
     * The strongly connected groups of more than one type (Tarjan): types that reach each other.
     * @param arrows type to the types it uses
     * @return the groups
     */
    public static List<Set<String>> cycles(Map<String, Set<String>> arrows) {
        List<Set<String>> groups = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        for (String type : arrows.keySet()) {
            if (!index.containsKey(type)) {
                connect(type, arrows, index, low, stack, onStack, groups);
            }
        }
        return groups;
    }

    private static void connect(String type, Map<String, Set<String>> arrows, Map<String, Integer> index,
            Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<Set<String>> groups) {
        index.put(type, index.size());
        low.put(type, index.get(type));
        stack.push(type);
        onStack.add(type);
        for (String used : arrows.getOrDefault(type, Set.of())) {
            if (!index.containsKey(used)) {
                connect(used, arrows, index, low, stack, onStack, groups);
                low.put(type, Math.min(low.get(type), low.get(used)));
            }
            else if (onStack.contains(used)) {
                low.put(type, Math.min(low.get(type), index.get(used)));
            }
        }
        if (low.get(type).equals(index.get(type))) {
            Set<String> group = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                group.add(member);
            }
            while (!member.equals(type));
            if (group.size() > 1) {
                groups.add(group);
            }
        }
    }

}
