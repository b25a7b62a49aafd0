package io.yarnctl.shim;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;

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
  // Unlike stock FIFO, asks keep their vcores and decisions are checked on memory and vcores, unless
  // yarnctl.shim.memory-only asks for stock FIFO's memory-only accounting.
  private static final ResourceCalculator DOMINANT = new DominantResourceCalculator();
  private static final ResourceCalculator MEMORY = new DefaultResourceCalculator();

  private final ShimCore core = new ShimCore(this);
  private volatile boolean memoryOnly;

  /** Creates the scheduler; the RM instantiates it by reflection. */
  public YarnctlScheduler() {
    super();
  }

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    super.serviceInit(conf);
    core.init(conf);
    memoryOnly = core.config().memoryOnly;
  }

  @Override
  public void serviceStop() throws Exception {
    core.stop();
    super.serviceStop();
  }

  /** Replaces the policy (tests and benchmarks inject in-JVM fakes); null turns delegation off. */
  void setPolicy(PolicyService p) {
    core.setPolicy(p);
  }

  void setClock(ShimCore.Clock c) {
    core.setClock(c);
  }

  @Override
  public void handle(SchedulerEvent event) {
    core.handle(event, super::handle);
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
      core.encoder().asksChanged(attemptId.getApplicationId(), r.getPriority().getPriority());
    }
    return out;
  }

  /** Records a {@code done} row for a live container, then lets FifoScheduler complete it. */
  @Override
  protected synchronized void completedContainer(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    core.beforeCompleted(rmContainer, status);
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
    core.nodeSized(nm.getNodeID(), resourceOption.getResource());
  }

  /**
   * The largest container an app may ask for: see {@link Allocations#maximumAllocation}, which a
   * policy's resizes do not shrink.
   */
  @Override
  public Resource getMaximumResourceCapability() {
    return core.maximumAllocation(super.getMaximumResourceCapability());
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
  public ShimCore core() {
    return core;
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
}
