package io.slidinglimiter.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletResponse;

/**
 * An RFC 9457 problem body, written without a JSON library: the values are few and known.
 */
final class ProblemJson {

    static final String CONTENT_TYPE = "application/problem+json";

    private ProblemJson() {
    }

    /**
     * Writes a problem. It has no {@code instance} member: the request path can hold the key.
     * @param extensions further members, each starting with a comma, already JSON
     */
    static void write(HttpServletResponse response, int status, String title, String type, String detail,
            String extensions) throws IOException {
        String body = "{\"type\":" + quote(type) + ",\"title\":" + quote(title) + ",\"status\":" + status
                + ",\"detail\":" + quote(detail) + extensions + "}";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setContentType(CONTENT_TYPE);
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
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
