package io.yarnctl.shim;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.hadoop.conf.Configuration;

/** The shim's {@code yarnctl.shim.*} properties, parsed once from the RM configuration. */
public final class ShimConfig {

  public static final String ENABLED = "yarnctl.shim.enabled";
  public static final boolean DEFAULT_ENABLED = true;
  public static final String ADDRESS = "yarnctl.shim.address";
  public static final String DEFAULT_ADDRESS = "127.0.0.1";
  public static final String PORT = "yarnctl.shim.port";
  public static final int DEFAULT_PORT = 25334;
  public static final String TOKEN_FILE = "yarnctl.shim.token-file";
  public static final String DEFAULT_TOKEN_FILE = "${user.home}/.yarnctl/bridge.token";
  public static final String DEADLINE_MS = "yarnctl.shim.deadline-ms";
  public static final int DEFAULT_DEADLINE_MS = 10;
  public static final String FULL_DEADLINE_MS = "yarnctl.shim.full-deadline-ms";
  public static final int DEFAULT_FULL_DEADLINE_MS = 1000;
  public static final String CONNECT_TIMEOUT_MS = "yarnctl.shim.connect-timeout-ms";
  public static final int DEFAULT_CONNECT_TIMEOUT_MS = 50;
  public static final String BREAKER_FAILURES = "yarnctl.shim.breaker.failures";
  public static final int DEFAULT_BREAKER_FAILURES = 3;
  public static final String BREAKER_PROBE_MS = "yarnctl.shim.breaker.probe-ms";
  public static final int DEFAULT_BREAKER_PROBE_MS = 5000;
  public static final String CALL_WHEN_FULL = "yarnctl.shim.call-when-full";
  public static final boolean DEFAULT_CALL_WHEN_FULL = false;
  // the share of cluster memory ApplicationMasters may hold when the shim decides natively (Python's
  // engine keeps the same default, yarnctl/policies/am_limit.py); 1 is FifoScheduler's: no limit
  public static final String NATIVE_MAX_AM_SHARE = "yarnctl.shim.native.max-am-share";
  public static final double DEFAULT_NATIVE_MAX_AM_SHARE = 0.5;
  // stock FifoScheduler's accounting: memory only (DefaultResourceCalculator), vcores neither checked
  // nor reported, so swapping FifoScheduler for the shim changes nothing; off, the shim counts vcores too
  public static final String MEMORY_ONLY = "yarnctl.shim.memory-only";
  public static final boolean DEFAULT_MEMORY_ONLY = false;

  public final boolean enabled;
  public final String address;
  public final int port;
  public final String tokenFile;
  public final int deadlineMs;
  public final int fullDeadlineMs;
  public final int connectTimeoutMs;
  public final int breakerFailures;
  public final int breakerProbeMs;
  public final boolean callWhenFull;
  public final double nativeMaxAmShare;
  public final boolean memoryOnly;

  private ShimConfig(Configuration conf) {
    enabled = bool(conf, ENABLED, DEFAULT_ENABLED);
    address = nonEmpty(conf, ADDRESS, DEFAULT_ADDRESS);
    port = integer(conf, PORT, DEFAULT_PORT, 1, 65535);
    // Configuration.get expands ${user.home} from the system properties.
    tokenFile = nonEmpty(conf, TOKEN_FILE, DEFAULT_TOKEN_FILE);
    deadlineMs = integer(conf, DEADLINE_MS, DEFAULT_DEADLINE_MS, 1, 60000);
    // Full state (every node, app, ask and container) takes Python far longer to parse than a delta.
    fullDeadlineMs = integer(conf, FULL_DEADLINE_MS, DEFAULT_FULL_DEADLINE_MS, 1, 600000);
    connectTimeoutMs = integer(conf, CONNECT_TIMEOUT_MS, DEFAULT_CONNECT_TIMEOUT_MS, 1, 60000);
    breakerFailures = integer(conf, BREAKER_FAILURES, DEFAULT_BREAKER_FAILURES, 1, Integer.MAX_VALUE);
    breakerProbeMs = integer(conf, BREAKER_PROBE_MS, DEFAULT_BREAKER_PROBE_MS, 1, Integer.MAX_VALUE);
    callWhenFull = bool(conf, CALL_WHEN_FULL, DEFAULT_CALL_WHEN_FULL);
    nativeMaxAmShare = fraction(conf, NATIVE_MAX_AM_SHARE, DEFAULT_NATIVE_MAX_AM_SHARE);
    memoryOnly = bool(conf, MEMORY_ONLY, DEFAULT_MEMORY_ONLY);
  }

  /** Parses every property, throwing IllegalArgumentException naming the property and the bad value. */
  public static ShimConfig from(Configuration conf) {
    return new ShimConfig(conf);
  }

  /** Reads the bridge token (trimmed); throws IOException when the file is missing, unreadable or empty. */
  public String readToken() throws IOException {
    File f = new File(tokenFile);
    String token = new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8).trim();
    if (token.isEmpty()) {
      throw new IOException("token file " + f + " is empty");
    }
    return token;
  }

  private static String raw(Configuration conf, String name) {
    String v = conf.get(name);
    return v == null ? null : v.trim();
  }

  private static boolean bool(Configuration conf, String name, boolean dflt) {
    String v = raw(conf, name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    if (v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException(name + " must be true or false, got '" + v + "'");
  }

  private static int integer(Configuration conf, String name, int dflt, int min, int max) {
    String v = raw(conf, name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer, got '" + v + "'");
    }
    if (n < min || n > max) {
      throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "], got " + n);
    }
    return (int) n;
  }

  private static double fraction(Configuration conf, String name, double dflt) {
    String v = raw(conf, name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    double x;
    try {
      x = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, got '" + v + "'");
    }
    if (!(x > 0 && x <= 1)) {
      throw new IllegalArgumentException(name + " must be in (0, 1], got " + v);
    }
    return x;
  }

  private static String nonEmpty(Configuration conf, String name, String dflt) {
    String v = raw(conf, name);
    if (v == null) {
      // Configuration expands variables only in values it holds, so expand the default the same way.
      Configuration tmp = new Configuration(false);
      tmp.set(name, dflt);
      return tmp.get(name);
    }
    if (v.isEmpty()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
    return v;
  }
}
