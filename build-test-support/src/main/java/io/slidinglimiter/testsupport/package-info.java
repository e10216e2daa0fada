/**
 * The build's own test harness: real {@code redis-server} processes (standalone, replicas,
 * Sentinel, Cluster) on free ports and the {@link io.slidinglimiter.testsupport.RedisExtension} JUnit
 * extension for them, concurrent and allocating callers, and the API listing check.
 * <p>
 * <b>Not published.</b> It serves this build's tests only.
 */
@NullMarked
package io.slidinglimiter.testsupport;

import org.jspecify.annotations.NullMarked;
