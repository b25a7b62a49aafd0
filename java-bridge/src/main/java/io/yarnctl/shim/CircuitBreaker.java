package io.yarnctl.shim;

/**
 * Consecutive-failure circuit breaker: opens after N failures, then admits one probe per interval.
 *
 * <p>Not thread-safe: the scheduler uses it under its own lock.
 */
final class CircuitBreaker {

  /** What to do with this heartbeat. */
  enum Admit { CALL, PROBE, SKIP }

  private final int failuresToOpen;
  private final long probeMs;
  private int failures;
  private boolean open;
  private long lastProbeMs;

  /** Creates a closed breaker. */
  CircuitBreaker(int failuresToOpen, long probeMs) {
    this.failuresToOpen = failuresToOpen;
    this.probeMs = probeMs;
  }

  /** Closed: CALL; open: PROBE once per interval (counted from opening or the last probe), else SKIP. */
  Admit admit(long nowMs) {
    if (!open) {
      return Admit.CALL;
    }
    if (nowMs - lastProbeMs >= probeMs) {
      lastProbeMs = nowMs;
      return Admit.PROBE;
    }
    return Admit.SKIP;
  }

  /** Records a successful call; returns true when this closed an open breaker. */
  boolean onSuccess() {
    failures = 0;
    boolean wasOpen = open;
    open = false;
    return wasOpen;
  }

  /** Records a failed call; returns true when this opened the breaker. */
  boolean onFailure(long nowMs) {
    failures++;
    if (!open && failures >= failuresToOpen) {
      open = true;
      lastProbeMs = nowMs;
      return true;
    }
    return false;
  }

  /** Whether heartbeats are currently kept native. */
  boolean isOpen() {
    return open;
  }
}
