package io.slidinglimiter.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A module's public face, one line per public type or member.
 * <p>
 * A module's public face, one line per public type and per public or protected member a user can
 * reach, read from its compiled classes: checked in beside the module as {@code api.txt} and
 * compared by a test, so that any change of the face shows as a diff in review. Run the module's
 * tests with {@code -Dapi.update=true} to write the listing anew after a change that is meant.
 */
public final class ApiListing {

    /** The system property that rewrites the listing instead of comparing it. */
    public static final String UPDATE = "api.update";

    private ApiListing() {
    }

    /**
     * Compares a module's face with its checked-in listing, or writes the listing when
     * {@value #UPDATE} is true.
     * @param classes the module's compiled classes ({@code target/classes})
     * @param listing the checked-in listing ({@code api.txt})
     */
    public static void assertMatches(Path classes, Path listing) {
        List<String> now = of(classes);
        try {
            if (Boolean.getBoolean(UPDATE)) {
                Files.write(listing, now, StandardCharsets.UTF_8);
                return;
            }
            List<String> checkedIn = Files.exists(listing) ? Files.readAllLines(listing, StandardCharsets.UTF_8)
                    : List.of();
            List<String> added = qualified(now);
            added.removeAll(qualified(checkedIn));
            List<String> removed = qualified(checkedIn);
            removed.removeAll(qualified(now));
            assertThat(added).as("public API added since " + listing + " (run with -D" + UPDATE
                    + "=true if it is meant, and review the diff)").isEmpty();
            assertThat(removed).as("public API removed since " + listing + " (run with -D" + UPDATE
                    + "=true if it is meant, and review the diff)").isEmpty();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * A listing's lines, each member's prefixed with its type's line: a member that two types both
     * declare is compared as two.
     */
    private static List<String> qualified(List<String> listing) {
        List<String> qualified = new ArrayList<>(listing.size());
        String type = "";
        for (String line : listing) {
            if (line.startsWith("    ")) {
                qualified.add(type + " :: " + line.strip());
            }
            else {
                type = line;
                qualified.add(line);
            }
        }
        return qualified;
    }

    /**
     * The listing of a directory of classes: a line per public type (reachable: its enclosing types
     * public too), by name, each followed by a line per public member, and per protected member of
     * a type that can be extended, sorted.
     * @param classes a directory of compiled classes
     * @return the lines
     */
    public static List<String> of(Path classes) {
        List<String> lines = new ArrayList<>();
        for (Class<?> type : publicTypes(classes)) {
            lines.add(describe(type));
            boolean extensible = !Modifier.isFinal(type.getModifiers()) && !type.isEnum() && !type.isRecord()
                    && type.getPermittedSubclasses() == null;
            List<String> members = new ArrayList<>();
            for (Constructor<?> constructor : type.getDeclaredConstructors()) {
                if (visible(constructor, extensible) && !constructor.isSynthetic()) {
                    members.add(constructor.toGenericString());
                }
            }
            for (Method method : type.getDeclaredMethods()) {
                if (visible(method, extensible) && !method.isSynthetic() && !method.isBridge()) {
                    members.add(method.toGenericString());
                }
            }
            for (Field field : type.getDeclaredFields()) {
                if (visible(field, extensible) && !field.isSynthetic()) {
                    members.add(field.toGenericString());
                }
            }
            String qualifier = " " + type.getName() + ".";
            members.stream().map((member) -> "    " + member.replace(qualifier, " ")).sorted().forEach(lines::add);
        }
        return lines;
    }

    /**
     * The public types of a directory of classes, nested ones included when every enclosing type is
     * public.
     * @param classes a directory of compiled classes
     * @return the types, by name
     */
    public static List<Class<?>> publicTypes(Path classes) {
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter((path) -> path.toString().endsWith(".class")).toList()) {
                String name = classes.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".");
                name = name.substring(0, name.length() - ".class".length());
                if (name.endsWith("package-info") || name.endsWith("module-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, ApiListing.class.getClassLoader());
                if (reachable(type)) {
                    types.add(type);
                }
            }
            types.sort(Comparator.comparing(Class::getName));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (ClassNotFoundException ex) {
            throw new IllegalStateException("A compiled class is not on the test class path", ex);
        }
        return types;
    }

    private static boolean reachable(Class<?> type) {
        if (type.isAnonymousClass() || type.isLocalClass() || type.isSynthetic()) {
            return false;
        }
        for (Class<?> each = type; each != null; each = each.getDeclaringClass()) {
            if (!Modifier.isPublic(each.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static boolean visible(Member member, boolean extensible) {
        int modifiers = member.getModifiers();
        return Modifier.isPublic(modifiers) || (extensible && Modifier.isProtected(modifiers));
    }

    private static String describe(Class<?> type) {
        String declaration = type.toGenericString();
        if (type.isEnum()) {
            // Java 21 and later print the implicit "sealed" of an enum with constant bodies; 17 does not.
            declaration = declaration.replace(" sealed enum ", " enum ");
        }
        else if (type.isSealed() && !declaration.contains(" sealed ")) {
            // A sealed type, which users cannot implement, as Java 21 and later print it; 17 does not.
            int kind = declaration.indexOf(type.isInterface() ? " interface " : " class ");
            declaration = declaration.substring(0, kind) + " sealed" + declaration.substring(kind);
        }
        StringBuilder line = new StringBuilder(declaration);
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class && !type.isEnum() && !type.isRecord()) {
            line.append(" extends ").append(superclass.getTypeName());
        }
        Type[] interfaces = type.getGenericInterfaces();
        if (interfaces.length > 0 && !type.isAnnotation()) {
            line.append(type.isInterface() ? " extends " : " implements ").append(Arrays.stream(interfaces)
                    .map(Type::getTypeName).collect(Collectors.joining(", ")));
        }
        return line.toString();
    }

}
