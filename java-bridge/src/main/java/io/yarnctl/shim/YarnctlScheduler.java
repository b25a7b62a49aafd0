package io.yarnctl.shim;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt.ContainersAndNMTokensAllocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
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
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The scheduler the RM loads: a FifoScheduler whose node heartbeats are decided by a Python policy
 * over py4j, with stock FIFO deciding whenever Python is slow, wrong or gone.
 *
 * <p>Every event but NODE_UPDATE goes to FifoScheduler unchanged and is recorded for the next delta.
 */
public class YarnctlScheduler extends FifoScheduler implements ShimHost {

  private static final Log LOG = LogFactory.getLog(YarnctlScheduler.class);
  private static final long SUMMARY_EVERY_MS = 60000;
  // Unlike stock FIFO, asks keep their vcores and decisions are checked on memory and vcores, unless
  // yarnctl.shim.memory-only asks for stock FIFO's memory-only accounting.
  private static final ResourceCalculator DOMINANT = new DominantResourceCalculator();
  private static final ResourceCalculator MEMORY = new DefaultResourceCalculator();

  private final DeltaEncoder encoder = new DeltaEncoder(this);
  private final Allocations allocations = new Allocations(this);
  private final Heartbeat heartbeat = new Heartbeat(this);
  private ShimConfig config;
  private ShimMetrics metrics;
  private CircuitBreaker breaker;
  private volatile PolicyService policy;
  private Clock clock = new Clock();
  private volatile boolean memoryOnly;
  private long lastSummaryMs;

  /** Time source, replaceable in tests. */
  static class Clock {
    long now() {
      return System.currentTimeMillis();
    }
  }

  /** Creates the scheduler; the RM instantiates it by reflection. */
  public YarnctlScheduler() {
    super();
  }

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    super.serviceInit(conf);
    allocations.configure(conf);
    config = ShimConfig.from(conf);
    memoryOnly = config.memoryOnly;
    metrics = new ShimMetrics(config.deadlineMs);
    breaker = new CircuitBreaker(config.breakerFailures, config.breakerProbeMs);
    lastSummaryMs = clock.now();
    if (policy == null) {
      policy = PolicyClient.connect(config, LOG);
    }
    metrics.register();
  }

  @Override
  public void serviceStop() throws Exception {
    PolicyService p = policy;
    if (p instanceof PolicyClient) {
      ((PolicyClient) p).close();
    }
    if (metrics != null) {
      metrics.unregister();
    }
    super.serviceStop();
  }

  /** Replaces the policy (tests and benchmarks inject in-JVM fakes); null turns delegation off. */
  void setPolicy(PolicyService p) {
    policy = p;
    encoder.markFull();
  }

  void setClock(Clock c) {
    clock = c;
  }

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
    case NODE_UPDATE:
      heartbeat.onNodeUpdate((NodeUpdateSchedulerEvent) event);
      return;
    case NODE_ADDED: {
      NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
      super.handle(event);
      allocations.nodeSized(e.getAddedRMNode().getNodeID(), e.getAddedRMNode().getTotalCapability());
      encoder.nodeChanged(e.getAddedRMNode().getNodeID());
      if (e.getContainerReports() != null && !e.getContainerReports().isEmpty()) {
        // Recovered containers bypass allocation: resend everything.
        encoder.markFull();
      }
      return;
    }
    case NODE_REMOVED:
      super.handle(event);
      allocations.nodeRemoved(((NodeRemovedSchedulerEvent) event).getRemovedRMNode().getNodeID());
      encoder.nodeLost(((NodeRemovedSchedulerEvent) event).getRemovedRMNode().getNodeID());
      return;
    case NODE_RESOURCE_UPDATE:
      // Our own resizes were applied at once; applying their echo later could undo a newer resize.
      if (!allocations.isOwnResize(((NodeResourceUpdateSchedulerEvent) event).getResourceOption())) {
        super.handle(event);  // -> updateNodeResource below
      }
      return;
    case APP_ADDED:
      super.handle(event);
      encoder.appAdded(((AppAddedSchedulerEvent) event).getApplicationId());
      return;
    case APP_REMOVED:
      super.handle(event);
      encoder.appGone(((AppRemovedSchedulerEvent) event).getApplicationID());
      return;
    case APP_ATTEMPT_ADDED:
      handleTouchingAsks(event, ((AppAttemptAddedSchedulerEvent) event).getApplicationAttemptId()
          .getApplicationId());
      return;
    case APP_ATTEMPT_REMOVED:
      handleTouchingAsks(event, ((AppAttemptRemovedSchedulerEvent) event).getApplicationAttemptID()
          .getApplicationId());
      return;
    case CONTAINER_RESCHEDULED:
      handleTouchingAsks(event, ((ContainerRescheduledEvent) event).getContainer().getApplicationAttemptId()
          .getApplicationId());
      return;
    default:
      super.handle(event);
    }
  }

  // The request tables before and after the event are both resent (the old ones as removals).
  private synchronized void handleTouchingAsks(SchedulerEvent event, ApplicationId app) {
    Set<Integer> priorities = AskRows.priorities(applications.get(app));
    super.handle(event);
    priorities.addAll(AskRows.priorities(applications.get(app)));
    for (Integer p : priorities) {
      encoder.asksChanged(app, p);
    }
  }

  /** FifoScheduler.allocate normalized by our calculator (dominant keeps vcores), then marks the asks dirty. */
  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<ContainerId> release, List<String> blacklistAdditions, List<String> blacklistRemovals) {
    FiCaSchedulerApp application = getApplicationAttempt(attemptId);
    if (application == null || !application.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("Calling allocate on removed, previous or non existent application attempt " + attemptId);
      return EMPTY_ALLOCATION;
    }
    SchedulerUtils.normalizeRequests(ask, getResourceCalculator(), clusterResource, minimumAllocation,
        getMaximumResourceCapability());
    releaseContainers(release, application);
    Allocation out;
    synchronized (application) {
      if (application.isStopped()) {
        LOG.info("Calling allocate on a stopped application " + attemptId);
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        application.updateResourceRequests(ask);
      }
      application.updateBlacklist(blacklistAdditions, blacklistRemovals);
      ContainersAndNMTokensAllocation allocation = application.pullNewlyAllocatedContainersAndNMTokens();
      Resource headroom = application.getHeadroom();
      application.setApplicationHeadroomForMetrics(headroom);
      out = new Allocation(allocation.getContainerList(), headroom, null, null, null,
          allocation.getNMTokenList());
    }
    for (ResourceRequest r : ask) {
      encoder.asksChanged(attemptId.getApplicationId(), r.getPriority().getPriority());
    }
    return out;
  }

  /** Records a {@code done} row for a live container, then lets FifoScheduler complete it. */
  @Override
  protected synchronized void completedContainer(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    if (rmContainer != null && liveContainer(rmContainer.getContainerId()) != null) {
      encoder.completed(rmContainer.getContainerId(), clock.now(), status.getExitStatus());
    }
    super.completedContainer(rmContainer, status, event);
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return memoryOnly ? MEMORY : DOMINANT;
  }

  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return memoryOnly ? EnumSet.of(SchedulerResourceTypes.MEMORY)
        : EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  /**
   * A resize from outside the shim (the admin's {@code rmadmin -updateNodeResource}, through the RM's
   * event or called directly): it becomes the node's registered size and Python hears of it.
   */
  @Override
  public synchronized void updateNodeResource(RMNode nm, ResourceOption resourceOption) {
    super.updateNodeResource(nm, resourceOption);
    allocations.nodeSized(nm.getNodeID(), resourceOption.getResource());
    encoder.nodeChanged(nm.getNodeID());
  }

  /**
   * The largest container an app may ask for: see {@link Allocations#maximumAllocation}, which a
   * policy's resizes do not shrink.
   */
  @Override
  public Resource getMaximumResourceCapability() {
    Resource max = allocations.maximumAllocation();
    return max != null ? max : super.getMaximumResourceCapability();
  }

  // ---- ShimHost: what the heartbeat path needs from the scheduler (public only because interface
  // methods are; not for use outside the shim) ----

  /** Whether vcores are checked and reported (false in memory-only mode, as stock FifoScheduler). */
  @Override
  public boolean countsVcores() {
    return !memoryOnly;
  }

  /** A policy's own resize: sets the node's size but not its registered size (see Allocations). */
  @Override
  public void resizeByPolicy(RMNode nm, ResourceOption resourceOption) {
    super.updateNodeResource(nm, resourceOption);
  }

  /** Runs FifoScheduler's own NODE_UPDATE handling (the native decision). */
  @Override
  public void nativeAllocate(NodeUpdateSchedulerEvent heartbeat) {
    super.handle(heartbeat);
  }

  /** Adds the container to FifoScheduler's used resource, as its own assignContainer does. */
  @Override
  public void accountContainer(RMContainer c) {
    Resources.addTo(getUsedResource(), c.getAllocatedResource());
  }

  /** Headroom and queue metrics after allocations, as FifoScheduler does at the end of a heartbeat. */
  @Override
  public void afterDecision() {
    // a capacity cut can leave more in use than the cluster now has: report no room, not negative room
    Resource free = Resources.componentwiseMax(Resources.none(),
        Resources.subtract(getClusterResource(), getUsedResource()));
    for (SchedulerApplication<FiCaSchedulerApp> app : applications.values()) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.setHeadroom(Resources.clone(free));
      }
    }
    getRootQueueMetrics().setAvailableResourcesToQueue(free);
  }

  @Override
  public Map<NodeId, FiCaSchedulerNode> nodesView() {
    return nodes;
  }

  @Override
  public Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> appsView() {
    return applications;
  }

  @Override
  public RMContext rmContext() {
    return rmContext;
  }

  @Override
  public DeltaEncoder encoder() {
    return encoder;
  }

  @Override
  public Allocations allocations() {
    return allocations;
  }

  @Override
  public ShimConfig config() {
    return config;
  }

  @Override
  public ShimMetrics metrics() {
    return metrics;
  }

  @Override
  public CircuitBreaker breaker() {
    return breaker;
  }

  @Override
  public PolicyService policy() {
    return policy;
  }

  @Override
  public long now() {
    return clock.now();
  }

  /** Container updates of one heartbeat, as the first half of FifoScheduler.nodeUpdate. */
  @Override
  public void launchedOnNode(ContainerId id, FiCaSchedulerNode node) {
    containerLaunchedOnNode(id, node);
  }

  @Override
  public void finished(ContainerStatus status) {
    completedContainer(getRMContainer(status.getContainerId()), status, RMContainerEventType.FINISHED);
  }

  @Override
  public void completeContainer(RMContainer c, ContainerStatus status, RMContainerEventType event) {
    completedContainer(c, status, event);
  }

  /** The live container with this id, or null. */
  @Override
  public RMContainer liveContainer(ContainerId id) {
    FiCaSchedulerApp attempt = getCurrentAttemptForContainer(id);
    return attempt == null ? null : attempt.getLiveContainersMap().get(id);
  }

  /** Logs the one-line summary at most once a minute (driven by heartbeats, so no timer thread). */
  @Override
  public void maybeLogSummary() {
    long now = clock.now();
    if (now - lastSummaryMs >= SUMMARY_EVERY_MS) {
      lastSummaryMs = now;
      LOG.info(metrics.summary());
    }
  }
}
