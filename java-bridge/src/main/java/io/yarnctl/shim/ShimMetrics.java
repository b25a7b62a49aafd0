package io.yarnctl.shim;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/** Shim counters, exposed over JMX and summarised in the RM log. */
public final class ShimMetrics implements ShimMetricsMBean {

  /** The JMX name, under the RM's own {@code Hadoop:service=ResourceManager} domain. */
  public static final String OBJECT_NAME = "Hadoop:service=ResourceManager,name=YarnctlShim";

  private static final Log LOG = LogFactory.getLog(ShimMetrics.class);

  /** Why a heartbeat was decided natively. */
  enum Fallback { TIMEOUT, ERROR, UNREACHABLE, REFUSED, BREAKER_OPEN, DISABLED }

  final AtomicLong heartbeats = new AtomicLong();
  final AtomicLong delegated = new AtomicLong();
  private final AtomicLong[] fallbacks = new AtomicLong[Fallback.values().length];
  final AtomicLong containersByPolicy = new AtomicLong();
  final AtomicLong containersNative = new AtomicLong();
  final AtomicLong rejected = new AtomicLong();
  // by refusal code: $defs.rejection of the wire schema, the same codes Python's validator uses
  private final ConcurrentMap<String, AtomicLong> rejectedBy = new ConcurrentHashMap<String, AtomicLong>();
  final AtomicLong killed = new AtomicLong();
  final AtomicLong resized = new AtomicLong();
  final AtomicLong fullSyncs = new AtomicLong();
  final AtomicLong breakerOpens = new AtomicLong();
  volatile boolean breakerOpen;
  volatile long lastLatencyMicros;
  private final int deadlineMillis;
  private ObjectName registered;

  /** Creates zeroed counters. */
  public ShimMetrics(int deadlineMillis) {
    this.deadlineMillis = deadlineMillis;
    for (int i = 0; i < fallbacks.length; i++) {
      fallbacks[i] = new AtomicLong();
    }
  }

  /** Counts one decision's refused rows by code. */
  void rejected(Map<String, Integer> byCode) {
    for (Map.Entry<String, Integer> e : byCode.entrySet()) {
      AtomicLong n = rejectedBy.get(e.getKey());
      if (n == null) {
        AtomicLong fresh = new AtomicLong();
        n = rejectedBy.putIfAbsent(e.getKey(), fresh);
        if (n == null) {
          n = fresh;
        }
      }
      n.addAndGet(e.getValue());
      rejected.addAndGet(e.getValue());
    }
  }

  /** Counts one natively decided heartbeat. */
  void fallback(Fallback why) {
    fallbacks[why.ordinal()].incrementAndGet();
  }

  /** Registers the bean, replacing one left by an earlier scheduler in this JVM (tests, RM HA transitions). */
  synchronized void register() {
    try {
      MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName(OBJECT_NAME);
      if (mbs.isRegistered(name)) {
        mbs.unregisterMBean(name);
      }
      mbs.registerMBean(this, name);
      registered = name;
    } catch (Exception e) {
      LOG.warn("yarnctl shim: could not register " + OBJECT_NAME + ": " + e);
    }
  }

  /** Unregisters the bean if this instance registered it. */
  synchronized void unregister() {
    if (registered == null) {
      return;
    }
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(registered);
    } catch (Exception e) {
      LOG.debug("yarnctl shim: unregister " + OBJECT_NAME + ": " + e);
    }
    registered = null;
  }

  /** One-line summary for the periodic INFO log. */
  String summary() {
    return "yarnctl shim: heartbeats=" + getHeartbeats() + " delegated=" + getDelegated()
        + " fallback=" + getFallback() + " (timeout=" + getFallbackTimeout() + " error=" + getFallbackError()
        + " unreachable=" + getFallbackUnreachable() + " refused=" + getFallbackRefused()
        + " breakerOpen=" + getFallbackBreakerOpen() + " disabled=" + getFallbackDisabled()
        + ") containersByPolicy=" + getContainersByPolicy() + " containersNative=" + getContainersNative()
        + " rejected=" + getRejected() + " (" + getRejectedByReason() + ") killed=" + getKilled() + " resized=" + getResized()
        + " fullSyncs=" + getFullSyncs() + " breakerOpens=" + getBreakerOpens()
        + " breaker=" + (breakerOpen ? "open" : "closed") + " lastLatencyUs=" + lastLatencyMicros;
  }

  @Override public long getHeartbeats() { return heartbeats.get(); }
  @Override public long getDelegated() { return delegated.get(); }
  @Override public long getFallback() {
    long sum = 0;
    for (AtomicLong f : fallbacks) {
      sum += f.get();
    }
    return sum;
  }
  @Override public long getFallbackTimeout() { return fallbacks[Fallback.TIMEOUT.ordinal()].get(); }
  @Override public long getFallbackError() { return fallbacks[Fallback.ERROR.ordinal()].get(); }
  @Override public long getFallbackUnreachable() { return fallbacks[Fallback.UNREACHABLE.ordinal()].get(); }
  @Override public long getFallbackRefused() { return fallbacks[Fallback.REFUSED.ordinal()].get(); }
  @Override public long getFallbackBreakerOpen() { return fallbacks[Fallback.BREAKER_OPEN.ordinal()].get(); }
  @Override public long getFallbackDisabled() { return fallbacks[Fallback.DISABLED.ordinal()].get(); }
  @Override public long getContainersByPolicy() { return containersByPolicy.get(); }
  @Override public long getContainersNative() { return containersNative.get(); }
  @Override public long getRejected() { return rejected.get(); }
  @Override public String getRejectedByReason() {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, AtomicLong> e : new TreeMap<String, AtomicLong>(rejectedBy).entrySet()) {
      out.append(out.length() == 0 ? "" : ",").append(e.getKey()).append('=').append(e.getValue().get());
    }
    return out.toString();
  }
  @Override public long getKilled() { return killed.get(); }
  @Override public long getResized() { return resized.get(); }
  @Override public long getFullSyncs() { return fullSyncs.get(); }
  @Override public long getBreakerOpens() { return breakerOpens.get(); }
  @Override public boolean isBreakerOpen() { return breakerOpen; }
  @Override public long getLastLatencyMicros() { return lastLatencyMicros; }
  @Override public int getDeadlineMillis() { return deadlineMillis; }
}
