package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeResourceUpdateEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
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
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The scheduler the RM loads: a FifoScheduler whose node heartbeats are decided by a Python policy
 * over py4j, with stock FIFO deciding whenever Python is slow, wrong or gone.
 *
 * <p>Every event but NODE_UPDATE goes to FifoScheduler unchanged and is recorded for the next delta.
 */
public class YarnctlScheduler extends FifoScheduler {

  private static final Log LOG = LogFactory.getLog(YarnctlScheduler.class);
  private static final long SUMMARY_EVERY_MS = 60000;
  // Unlike stock FIFO, asks keep their vcores and decisions are checked on memory and vcores.
  private static final ResourceCalculator DOMINANT = new DominantResourceCalculator();

  private final DeltaEncoder encoder = new DeltaEncoder(this);
  private final DecisionApplier applier = new DecisionApplier(this);
  private final NativeFifo nativeFifo = new NativeFifo(this);
  // Node sizes as registered or set by an admin (not by our resizes), for the maximum allocation.
  private final Map<NodeId, Resource> registered = new ConcurrentHashMap<NodeId, Resource>();
  // Resizes we applied ourselves, by identity, so their echo event is not applied a second time.
  private final Set<ResourceOption> ownResizes =
      Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<ResourceOption, Boolean>()));
  private volatile Resource configuredMax;
  private final Heartbeat heartbeat = new Heartbeat(this);
  private ShimConfig config;
  private ShimMetrics metrics;
  private CircuitBreaker breaker;
  private volatile PolicyService policy;
  private PolicyClient client;
  private Clock clock = new Clock();
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
    configuredMax = Resources.createResource(
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB),
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES));
    config = ShimConfig.from(conf);
    metrics = new ShimMetrics(config.deadlineMs);
    breaker = new CircuitBreaker(config.breakerFailures, config.breakerProbeMs);
    lastSummaryMs = clock.now();
    if (policy == null) {
      policy = connect(config);
    }
    metrics.register();
  }

  private static PolicyService connect(ShimConfig c) {
    if (!c.enabled) {
      LOG.info("yarnctl shim: " + ShimConfig.ENABLED + "=false; every heartbeat is decided natively (FIFO)");
      return null;
    }
    String token;
    try {
      token = c.readToken();
    } catch (Exception e) {
      LOG.error("yarnctl shim: cannot read the bridge token from " + c.tokenFile + " (" + e
          + "); delegation is off and every heartbeat is decided natively (FIFO)");
      return null;
    }
    try {
      PolicyClient pc = new PolicyClient(c.address, c.port, token, c.connectTimeoutMs, c.deadlineMs,
          c.fullDeadlineMs);
      LOG.info("yarnctl shim: delegating node heartbeats to " + c.address + ":" + c.port + " with a "
          + c.deadlineMs + " ms deadline (" + c.fullDeadlineMs + " ms for full state)");
      return pc;
    } catch (Exception e) {
      LOG.error("yarnctl shim: cannot set up the py4j client for " + c.address + ":" + c.port + " (" + e
          + "); delegation is off and every heartbeat is decided natively (FIFO)");
      return null;
    }
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
      registered.put(e.getAddedRMNode().getNodeID(), Resources.clone(e.getAddedRMNode().getTotalCapability()));
      encoder.nodeChanged(e.getAddedRMNode().getNodeID());
      if (e.getContainerReports() != null && !e.getContainerReports().isEmpty()) {
        // Recovered containers bypass allocation: resend everything.
        encoder.markFull();
      }
      return;
    }
    case NODE_REMOVED:
      super.handle(event);
      registered.remove(((NodeRemovedSchedulerEvent) event).getRemovedRMNode().getNodeID());
      encoder.nodeLost(((NodeRemovedSchedulerEvent) event).getRemovedRMNode().getNodeID());
      return;
    case NODE_RESOURCE_UPDATE: {
      NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
      // Our own resizes were applied at once; applying their echo later could undo a newer resize.
      if (!ownResizes.remove(e.getResourceOption())) {
        super.handle(event);
        registered.put(e.getRMNode().getNodeID(), Resources.clone(e.getResourceOption().getResource()));
        encoder.nodeChanged(e.getRMNode().getNodeID());
      }
      return;
    }
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
    Set<Integer> priorities = priorities(app);
    super.handle(event);
    priorities.addAll(priorities(app));
    for (Integer p : priorities) {
      encoder.asksChanged(app, p);
    }
  }

  private Set<Integer> priorities(ApplicationId app) {
    Set<Integer> out = new HashSet<Integer>();
    SchedulerApplication<FiCaSchedulerApp> a = applications.get(app);
    FiCaSchedulerApp attempt = a == null ? null : a.getCurrentAppAttempt();
    if (attempt != null) {
      synchronized (attempt) {
        for (Priority p : attempt.getPriorities()) {
          out.add(p.getPriority());
        }
      }
    }
    return out;
  }

  /** FifoScheduler.allocate with dominant-resource normalization (keeps vcores), then marks the asks dirty. */
  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<ContainerId> release, List<String> blacklistAdditions, List<String> blacklistRemovals) {
    FiCaSchedulerApp application = getApplicationAttempt(attemptId);
    if (application == null || !application.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("Calling allocate on removed, previous or non existent application attempt " + attemptId);
      return EMPTY_ALLOCATION;
    }
    SchedulerUtils.normalizeRequests(ask, DOMINANT, clusterResource, minimumAllocation,
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
    return DOMINANT;
  }

  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  // ---- package-private hooks for Heartbeat, DeltaEncoder and DecisionApplier (under the scheduler lock) ----

  /** Runs FifoScheduler's own NODE_UPDATE handling (the native decision). */
  void nativeNodeUpdate(NodeUpdateSchedulerEvent event) {
    super.handle(event);
  }

  Map<NodeId, FiCaSchedulerNode> nodesView() {
    return nodes;
  }

  Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> appsView() {
    return applications;
  }

  RMContext rmContext() {
    return rmContext;
  }

  DeltaEncoder encoder() {
    return encoder;
  }

  DecisionApplier applier() {
    return applier;
  }

  NativeFifo nativeFifo() {
    return nativeFifo;
  }

  ShimConfig config() {
    return config;
  }

  ShimMetrics metrics() {
    return metrics;
  }

  CircuitBreaker breaker() {
    return breaker;
  }

  PolicyService policy() {
    return policy;
  }

  long now() {
    return clock.now();
  }

  /** Container updates of one heartbeat, as the first half of FifoScheduler.nodeUpdate. */
  void launchedOnNode(ContainerId id, FiCaSchedulerNode node) {
    containerLaunchedOnNode(id, node);
  }

  void finished(ContainerStatus status) {
    completedContainer(getRMContainer(status.getContainerId()), status, RMContainerEventType.FINISHED);
  }

  /** The live container with this id, or null. */
  RMContainer liveContainer(ContainerId id) {
    FiCaSchedulerApp attempt = getCurrentAttemptForContainer(id);
    return attempt == null ? null : attempt.getLiveContainersMap().get(id);
  }

  /** Kills through the scheduler's kill path with a preempted status (MR re-runs without a failure). */
  void killContainer(RMContainer c) {
    completedContainer(c, SchedulerUtils.createPreemptedContainerStatus(c.getContainerId(),
        SchedulerUtils.PREEMPTED_CONTAINER), RMContainerEventType.KILL);
  }

  /** Sets a node's capacity in the scheduler now and in RMNode through its own event. */
  void resizeNode(FiCaSchedulerNode node, Resource total) {
    RMNode rmNode = node.getRMNode();
    ResourceOption option = ResourceOption.newInstance(total, RMNode.OVER_COMMIT_TIMEOUT_MILLIS_DEFAULT);
    ownResizes.add(option);
    updateNodeResource(rmNode, option);
    rmContext.getDispatcher().getEventHandler().handle(new RMNodeResourceUpdateEvent(rmNode.getNodeID(), option));
    encoder.nodeChanged(rmNode.getNodeID());
  }

  /** Allocates one container of {@code req} on {@code node} through the RM's own allocation path. */
  RMContainer allocateOnNode(FiCaSchedulerNode node, FiCaSchedulerApp app, Priority priority,
      ResourceRequest req, NodeType type) {
    ContainerId id = BuilderUtils.newContainerId(app.getApplicationAttemptId(), app.getNewContainerId());
    // the ANY request's size: the one the fit check used and the one Python's mirror assumes
    ResourceRequest any = app.getResourceRequest(priority, ResourceRequest.ANY);
    Resource size = any != null ? any.getCapability() : req.getCapability();
    Container container = BuilderUtils.newContainer(id, node.getNodeID(), node.getRMNode().getHttpAddress(),
        Resources.clone(size), priority, null);
    RMContainer rmc = app.allocate(type, node, priority, req, container);
    if (rmc == null) {
      return null;
    }
    node.allocateContainer(rmc);
    Resources.addTo(getUsedResource(), rmc.getAllocatedResource());
    encoder.allocated(rmc, encoder.isAmAtAllocation(rmc));
    return rmc;
  }

  /**
   * The largest container an app may ask for: the configured maximum, capped by the largest node as
   * it registered. A policy's resizes (OPERA, usage feedback) must not shrink it: the RM would then
   * refuse running AMs' asks and new submissions that were valid a heartbeat ago.
   */
  @Override
  public Resource getMaximumResourceCapability() {
    if (configuredMax == null) {
      return super.getMaximumResourceCapability();
    }
    Resource largest = Resources.none();
    for (Resource r : registered.values()) {
      largest = Resources.componentwiseMax(largest, r);
    }
    return registered.isEmpty() ? Resources.clone(configuredMax) : Resources.componentwiseMin(configuredMax, largest);
  }

  /** Headroom and queue metrics after allocations, as FifoScheduler does at the end of a heartbeat. */
  void refreshHeadroomAndMetrics() {
    // a capacity cut can leave more in use than the cluster now has: report no room, not negative room
    Resource free = Resources.componentwiseMax(Resources.none(),
        Resources.subtract(clusterResource, getUsedResource()));
    for (SchedulerApplication<FiCaSchedulerApp> app : applications.values()) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.setHeadroom(Resources.clone(free));
      }
    }
    getRootQueueMetrics().setAvailableResourcesToQueue(free);
  }

  /** Logs the one-line summary at most once a minute (driven by heartbeats, so no timer thread). */
  void maybeLogSummary() {
    long now = clock.now();
    if (now - lastSummaryMs >= SUMMARY_EVERY_MS) {
      lastSummaryMs = now;
      LOG.info(metrics.summary());
    }
  }

  /** Containers running on {@code node} now. */
  static Set<ContainerId> running(FiCaSchedulerNode node) {
    Set<ContainerId> ids = new HashSet<ContainerId>();
    for (RMContainer c : node.getRunningContainers()) {
      ids.add(c.getContainerId());
    }
    return ids;
  }

  static List<RMContainer> newSince(FiCaSchedulerNode node, Set<ContainerId> before) {
    List<RMContainer> out = new ArrayList<RMContainer>();
    for (RMContainer c : node.getRunningContainers()) {
      if (!before.contains(c.getContainerId())) {
        out.add(c);
      }
    }
    return out;
  }
}
