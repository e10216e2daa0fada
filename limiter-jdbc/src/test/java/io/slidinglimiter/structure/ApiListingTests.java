package io.slidinglimiter.structure;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.slidinglimiter.testsupport.ApiListing;

/**
 * The module's public face, compared with its checked-in listing ({@code api.txt}, one line per
 * public type and member): a change of the face is a diff in review. After a change that is
 * meant, run {@code mvn test -Dtest=ApiListingTests -Dapi.update=true} in the module.
 */
class ApiListingTests {

    @Test
    void thePublicFaceIsTheCheckedInListing() {
        ApiListing.assertMatches(Path.of("target/classes"), Path.of("api.txt"));
    }

}
