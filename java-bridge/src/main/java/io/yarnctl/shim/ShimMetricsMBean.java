package io.yarnctl.shim;

/** JMX view of the shim, registered as {@code Hadoop:service=ResourceManager,name=YarnctlShim}. */
public interface ShimMetricsMBean {
  /** NODE_UPDATE events seen. */
  long getHeartbeats();
  /** Heartbeats decided by the Python policy. */
  long getDelegated();
  /** Heartbeats decided natively for any reason (sum of the Fallback* counters). */
  long getFallback();
  /** Fallbacks because Python missed the deadline. */
  long getFallbackTimeout();
  /** Fallbacks because the call or the apply threw. */
  long getFallbackError();
  /** Fallbacks because Python could not be connected to. */
  long getFallbackUnreachable();
  /** Fallbacks because the response was refused (bad JSON/shape, wrong seq, resync, err). */
  long getFallbackRefused();
  /** Fallbacks because the circuit breaker was open. */
  long getFallbackBreakerOpen();
  /** Fallbacks because delegation is off (disabled or no token). */
  long getFallbackDisabled();
  /** Containers allocated by policy decisions. */
  long getContainersByPolicy();
  /** Containers allocated by the native FIFO fallback. */
  long getContainersNative();
  /** Decision rows refused by re-validation. */
  long getRejected();
  /** The same by refusal code, e.g. {@code locality=1,no-fit=3} (codes: $defs.rejection of the wire schema). */
  String getRejectedByReason();
  /** Containers killed by decisions. */
  long getKilled();
  /** Node capacity changes applied from decisions. */
  long getResized();
  /** Full-state requests sent. */
  long getFullSyncs();
  /** Times the breaker opened. */
  long getBreakerOpens();
  /** Whether the breaker is open now. */
  boolean isBreakerOpen();
  /** Round-trip time of the last call, in microseconds. */
  long getLastLatencyMicros();
  /** The configured deadline. */
  int getDeadlineMillis();
}
