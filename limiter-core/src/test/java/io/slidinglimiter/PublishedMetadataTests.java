package io.slidinglimiter;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metadata a published module's POM carries, read from the POMs Maven installs: the parent's
 * (which every module inherits) names this project's license, site, source and issues, not Spring
 * Boot's, whose parent it extends; the published modules inherit it; the demos are not published.
 */
class PublishedMetadataTests {

    private static final Path ROOT = Path.of("..");

    private static final String SITE = "https://github.com/sliding-limiter/sliding-limiter";

    @Test
    void theParentNamesTheLicenseSiteSourceDevelopersAndIssues() throws Exception {
        Element project = pom(ROOT.resolve("pom.xml"));
        assertThat(text(project, "name")).isEqualTo("Sliding Limiter");
        assertThat(text(project, "description")).isNotBlank();
        assertThat(text(project, "url")).isEqualTo(SITE);
        Element license = child(child(project, "licenses"), "license");
        assertThat(text(license, "name")).isEqualTo("Apache License, Version 2.0");
        assertThat(text(license, "url")).isEqualTo("https://www.apache.org/licenses/LICENSE-2.0");
        assertThat(text(child(project, "scm"), "url")).isEqualTo(SITE);
        assertThat(text(child(project, "scm"), "connection")).isEqualTo("scm:git:" + SITE + ".git");
        assertThat(text(child(child(project, "developers"), "developer"), "name")).isNotBlank();
        assertThat(text(child(project, "issueManagement"), "url")).isEqualTo(SITE + "/issues");
        assertThat(Files.readString(ROOT.resolve("LICENSE"))).contains("Apache License")
                .contains("Version 2.0, January 2004");
    }

    @Test
    void publishedModulesInheritItAndTheDemosAreNotPublished() throws Exception {
        for (String module : List.of("limiter-core", "limiter-redis", "limiter-autoconfigure", "limiter-starter",
                "limiter-test")) {
            Element project = pom(ROOT.resolve(module).resolve("pom.xml"));
            assertThat(text(child(project, "parent"), "artifactId")).as(module).isEqualTo("limiter-parent");
            assertThat(text(project, "name")).as(module).startsWith("Sliding Limiter");
            assertThat(text(project, "description")).as(module).isNotBlank();
            for (String inherited : List.of("url", "licenses", "scm", "developers")) {
                assertThat(children(project, inherited)).as(module + " overrides " + inherited).isEmpty();
            }
        }
        for (String demo : List.of("sample-app", "sample-webflux", "benchmarks")) {
            Element properties = child(pom(ROOT.resolve(demo).resolve("pom.xml")), "properties");
            assertThat(text(properties, "maven.deploy.skip")).as(demo).isEqualTo("true");
        }
    }

    private static Element pom(Path file) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document document = factory.newDocumentBuilder().parse(file.toFile());
        return document.getDocumentElement();
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        assertThat(found).as("<" + name + "> in <" + parent.getTagName() + ">").hasSize(1);
        return found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                found.add(element);
            }
        }
        return found;
    }

    private static String text(Element parent, String name) {
        return child(parent, name).getTextContent().trim();
    }

}
