package io.yarnctl.shim;

import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerRescheduledEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;

/**
 * The shim's parts and event routing, one per host: whichever scheduler the host extends, the same
 * encoder, allocations, heartbeat path, configuration, metrics, breaker, policy and clock.
 *
 * <p>A host creates one in a field initializer, calls {@link #init}/{@link #stop} from its service
 * methods, sends every scheduler event through {@link #handle} and every completion through
 * {@link #beforeCompleted}.
 */
final class ShimCore {

  // the scheduler's logger, as before the parts moved here: operators grep for it
  private static final Log LOG = LogFactory.getLog(YarnctlScheduler.class);
  private static final long SUMMARY_EVERY_MS = 60000;

  /** Time source, replaceable in tests. */
  static class Clock {
    long now() {
      return System.currentTimeMillis();
    }
  }

  /** The host's inherited event handling (its superclass's {@code handle}). */
  interface Inherited {
    void handle(SchedulerEvent event);
  }

  private final ShimHost host;
  private final DeltaEncoder encoder;
  private final Allocations allocations;
  private final Heartbeat heartbeat;
  private ShimConfig config;
  private ShimMetrics metrics;
  private CircuitBreaker breaker;
  private volatile PolicyService policy;
  private Clock clock = new Clock();
  private long lastSummaryMs;

  /** The parts of {@code host}; nothing is read from it until the first event. */
  ShimCore(ShimHost host) {
    this.host = host;
    this.encoder = new DeltaEncoder(host);
    this.allocations = new Allocations(host);
    this.heartbeat = new Heartbeat(host);
  }

  /** Reads the shim's configuration, registers its metrics and connects the policy (after the host's own init). */
  void init(Configuration conf) {
    allocations.configure(conf);
    config = ShimConfig.from(conf);
    metrics = new ShimMetrics(config.deadlineMs);
    breaker = new CircuitBreaker(config.breakerFailures, config.breakerProbeMs);
    lastSummaryMs = clock.now();
    if (policy == null) {
      policy = PolicyClient.connect(config, LOG);
    }
    metrics.register();
  }

  /** Closes the policy connection and unregisters the metrics (before the host's own stop). */
  void stop() {
    PolicyService p = policy;
    if (p instanceof PolicyClient) {
      ((PolicyClient) p).close();
    }
    if (metrics != null) {
      metrics.unregister();
    }
  }

  /** Replaces the policy (tests and benchmarks inject in-JVM fakes); null turns delegation off. */
  void setPolicy(PolicyService p) {
    policy = p;
    encoder.markFull();
  }

  void setClock(Clock c) {
    clock = c;
  }

  /**
   * Routes one scheduler event: NODE_UPDATE to the heartbeat path, every other event to the host's
   * inherited handling, recorded for the next delta.
   */
  void handle(SchedulerEvent event, Inherited inherited) {
    switch (event.getType()) {
    case NODE_UPDATE:
      heartbeat.onNodeUpdate((NodeUpdateSchedulerEvent) event);
      return;
    case NODE_ADDED: {
      NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
      inherited.handle(event);
      nodeSized(e.getAddedRMNode().getNodeID(), e.getAddedRMNode().getTotalCapability());
      if (e.getContainerReports() != null && !e.getContainerReports().isEmpty()) {
        // Recovered containers bypass allocation: resend everything.
        encoder.markFull();
      }
      return;
    }
    case NODE_REMOVED: {
      NodeId id = ((NodeRemovedSchedulerEvent) event).getRemovedRMNode().getNodeID();
      inherited.handle(event);
      allocations.nodeRemoved(id);
      encoder.nodeLost(id);
      return;
    }
    case NODE_RESOURCE_UPDATE:
      // Our own resizes were applied at once; applying their echo later could undo a newer resize.
      if (!allocations.isOwnResize(((NodeResourceUpdateSchedulerEvent) event).getResourceOption())) {
        inherited.handle(event);  // -> the host's updateNodeResource, which calls nodeSized
      }
      return;
    case APP_ADDED: {
      ApplicationId id = ((AppAddedSchedulerEvent) event).getApplicationId();
      inherited.handle(event);
      // a scheduler with queues may reject the app, and a rejected app never enters its map
      if (host.appsView().containsKey(id)) {
        encoder.appAdded(id);
      }
      return;
    }
    case APP_REMOVED:
      inherited.handle(event);
      encoder.appGone(((AppRemovedSchedulerEvent) event).getApplicationID());
      return;
    case APP_ATTEMPT_ADDED:
      handleTouchingAsks(event, ((AppAttemptAddedSchedulerEvent) event).getApplicationAttemptId()
          .getApplicationId(), inherited);
      return;
    case APP_ATTEMPT_REMOVED:
      handleTouchingAsks(event, ((AppAttemptRemovedSchedulerEvent) event).getApplicationAttemptID()
          .getApplicationId(), inherited);
      return;
    case CONTAINER_RESCHEDULED:
      handleTouchingAsks(event, ((ContainerRescheduledEvent) event).getContainer().getApplicationAttemptId()
          .getApplicationId(), inherited);
      return;
    default:
      inherited.handle(event);
    }
  }

  // The request tables before and after the event are both resent (the old ones as removals).
  private void handleTouchingAsks(SchedulerEvent event, ApplicationId app, Inherited inherited) {
    synchronized (host) {
      Set<Integer> priorities = AskRows.priorities(host.appsView().get(app));
      inherited.handle(event);
      priorities.addAll(AskRows.priorities(host.appsView().get(app)));
      for (Integer p : priorities) {
        encoder.asksChanged(app, p);
      }
    }
  }

  /** A node's size as it registered or as an admin set it: the maximum allocation follows, Python hears of it. */
  void nodeSized(NodeId id, Resource total) {
    allocations.nodeSized(id, total);
    encoder.nodeChanged(id);
  }

  /** Records a {@code done} row for a live container the host is about to complete. */
  void beforeCompleted(RMContainer rmContainer, ContainerStatus status) {
    if (rmContainer != null && host.liveContainer(rmContainer.getContainerId()) != null) {
      encoder.completed(rmContainer.getContainerId(), clock.now(), status.getExitStatus());
    }
  }

  /** The largest container an app may ask for (see {@link Allocations#maximumAllocation}), or {@code inherited}. */
  Resource maximumAllocation(Resource inherited) {
    Resource max = allocations.maximumAllocation();
    return max != null ? max : inherited;
  }

  DeltaEncoder encoder() {
    return encoder;
  }

  Allocations allocations() {
    return allocations;
  }

  /** The shim's configuration (null before init). */
  ShimConfig config() {
    return config;
  }

  /** The shim's JMX counters (null before init). */
  ShimMetrics metrics() {
    return metrics;
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  /** The Python policy, or null when delegation is off. */
  PolicyService policy() {
    return policy;
  }

  /** Milliseconds now, from the replaceable clock. */
  long now() {
    return clock.now();
  }

  /** Logs the one-line summary at most once a minute (driven by heartbeats, so no timer thread). */
  void maybeLogSummary() {
    long now = clock.now();
    if (now - lastSummaryMs >= SUMMARY_EVERY_MS) {
      lastSummaryMs = now;
      LOG.info(metrics.summary());
    }
  }
}
