package io.slidinglimiter.test;

/**
 * One of two test classes sharing a cached context, each with the tests of {@link SharingTests}
 * and {@link ResetRateLimits} inherited from it.
 */
class FirstSharingTests extends SharingTests {

}
