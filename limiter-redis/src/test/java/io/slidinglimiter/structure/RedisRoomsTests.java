package io.slidinglimiter.structure;

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

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rooms of {@code redis/} point one way: no type reaches, through others, back to one that
 * reaches it (read from the compiled classes by {@code jdeps}), and the walk of a key goes down only.
 */
class RedisRoomsTests {

    @Test
    void theRedisPackagePointsOneWay() {
        Map<String, Set<String>> arrows = arrows(Path.of("target/classes"), "io.slidinglimiter.redis.");
        assertThat(arrows).as("jdeps read the package").containsKey("ResilientRedisBackend");
        assertThat(cycles(arrows)).as("groups of types that reach each other").isEmpty();
    }

    @Test
    void theWalkOfAKeyGoesDownOnly() {
        Map<String, Set<String>> arrows = arrows(Path.of("target/classes"), "io.slidinglimiter.redis.");
        List<String> walk = List.of("ResilientRedisBackend", "Leases", "RedisBackend", "ScriptMessages");
        for (int i = 1; i < walk.size(); i++) {
            for (int j = 0; j < i; j++) {
                assertThat(reaches(arrows, walk.get(i), walk.get(j))).as(walk.get(i) + " reaches back to " + walk.get(j))
                        .isFalse();
            }
        }
        assertThat(reaches(arrows, "RedisBackend", "LettuceScriptRunner")).as("the script runs through the runner")
                .isTrue();
    }

    /** Type to the types it uses, within one package, nested types folded into their top-level type. */
    static Map<String, Set<String>> arrows(Path classes, String packagePrefix) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
        StringWriter out = new StringWriter();
        int status = jdeps.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "-verbose:class",
                "-filter:none", classes.toString());
        assertThat(status).as("jdeps: " + out).isZero();
        Map<String, Set<String>> arrows = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length >= 3 && parts[1].equals("->") && parts[0].startsWith(packagePrefix)
                    && parts[2].startsWith(packagePrefix)) {
                String from = topLevel(parts[0].substring(packagePrefix.length()));
                String to = topLevel(parts[2].substring(packagePrefix.length()));
                if (!from.contains(".") && !to.contains(".") && !from.equals(to)) {
                    arrows.computeIfAbsent(from, (ignored) -> new TreeSet<>()).add(to);
                }
                arrows.computeIfAbsent(from, (ignored) -> new TreeSet<>());
            }
        }
        return arrows;
    }

    private static String topLevel(String type) {
        int nested = type.indexOf('$');
        return (nested < 0) ? type : type.substring(0, nested);
    }

    private static boolean reaches(Map<String, Set<String>> arrows, String from, String to) {
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

    /** The strongly connected groups of more than one type (Tarjan). */
    static List<Set<String>> cycles(Map<String, Set<String>> arrows) {
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
