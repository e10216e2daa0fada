package io.slidinglimiter.web;

/**
 * An RFC 9457 problem body, written without a JSON library.
 * <p>
 * The values are few and known.
 */
final class ProblemJson {

    static final String CONTENT_TYPE = "application/problem+json";

    private ProblemJson() {
    }

    /**
     * A problem's JSON. It has no {@code instance} member: the request path can hold the key.
     * @param extensions further members, each starting with a comma, already JSON
     * @return the body
     */
    static String body(int status, String title, String type, String detail, String extensions) {
        return "{\"type\":" + quote(type) + ",\"title\":" + quote(title) + ",\"status\":" + status
                + ",\"detail\":" + quote(detail) + extensions + "}";
    }

    static String quote(String value) {
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }

}
