package io.slidinglimiter.testsupport;

import java.io.File;

/**
 * Removes what the test servers left in their temporary directories.
 */
final class TemporaryFiles {

    private TemporaryFiles() {
    }

    /**
     * Deletes a file, or a directory with everything in it, ignoring what cannot be deleted.
     * @param file the file or directory
     */
    static void deleteQuietly(File file) {
        File[] children = file.listFiles();
        if (children != null) {
            for (File child : children) {
                deleteQuietly(child);
            }
        }
        file.delete();
    }

}
