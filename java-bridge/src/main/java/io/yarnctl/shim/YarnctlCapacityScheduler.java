package io.yarnctl.shim;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceLimits;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.LeafQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The shim on CapacityScheduler (docs/design/queues.md, step 2): the operator's queue tree, ACLs,
 * limits and QueueMetrics are CapacityScheduler's own, node heartbeats are decided by the Python
 * policy, and whatever Python does not decide is CapacityScheduler's own pass.
 *
 * <p>Opt-in: {@link YarnctlScheduler}, on FifoScheduler, is the default until Hadoop's CapacityScheduler
 * tests have run against this one (docs/design/queues.md, steps 7-8).
 */
public class YarnctlCapacityScheduler extends CapacityScheduler implements ShimHost {

  private final ShimCore core = new ShimCore(this);

  /** Creates the scheduler; the RM instantiates it by reflection. */
  public YarnctlCapacityScheduler() {
    super();
  }

  /** CapacityScheduler's init, then the shim's; refuses the CapacityScheduler features Python cannot take part in. */
  @Override
  public void serviceInit(Configuration conf) throws Exception {
    super.serviceInit(conf);
    if (getConfiguration().getScheduleAynschronously()) {
      // its scheduling thread allocates on every node without a heartbeat, bypassing the policy
      throw new IllegalArgumentException("yarnctl shim: " + CapacitySchedulerConfiguration.SCHEDULE_ASYNCHRONOUSLY_ENABLE
          + " is true; the shim decides on node heartbeats only, set it to false");
    }
    core.init(conf);
    if (core.config().memoryOnly) {
      throw new IllegalArgumentException("yarnctl shim: " + ShimConfig.MEMORY_ONLY + " is for the FIFO host; under"
          + " CapacityScheduler set yarn.scheduler.capacity.resource-calculator instead");
    }
  }

  @Override
  public void serviceStop() throws Exception {
    core.stop();
    super.serviceStop();
  }

  /** Replaces the policy (tests inject in-JVM fakes); null turns delegation off. */
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

  /** CapacityScheduler's allocate (normalizing, releases, headroom, preemption), then marks the asks dirty. */
  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<ContainerId> release, List<String> blacklistAdditions, List<String> blacklistRemovals) {
    Allocation out = super.allocate(attemptId, ask, release, blacklistAdditions, blacklistRemovals);
    for (ResourceRequest r : ask) {
      core.encoder().asksChanged(attemptId.getApplicationId(), r.getPriority().getPriority());
    }
    return out;
  }

  /** Records a {@code done} row for a live container, then lets CapacityScheduler release it from its queues. */
  @Override
  protected synchronized void completedContainer(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    core.beforeCompleted(rmContainer, status);
    super.completedContainer(rmContainer, status, event);
  }

  /** A resize from outside the shim: it becomes the node's registered size and Python hears of it. */
  @Override
  public synchronized void updateNodeResource(RMNode nm, ResourceOption resourceOption) {
    super.updateNodeResource(nm, resourceOption);
    core.nodeSized(nm.getNodeID(), resourceOption.getResource());
  }

  /**
   * {@code rmadmin -refreshQueues}: CapacityScheduler's own refresh, which keeps the old tree if the new one
   * is invalid, after parsing capacity-scheduler.xml first; then full state, so Python gets the new tree.
   * CapacityScheduler parses the file lazily, after it has replaced its configuration and outside its own
   * rollback: a malformed file would escape as a bare RuntimeException and stay its configuration
   * (docs/design/queues.md, section 1, note b).
   */
  @Override
  public synchronized void reinitialize(Configuration conf, RMContext rmContext) throws IOException {
    try {
      Configuration probe = new Configuration(conf);
      // the scheduler's own context, as CapacityScheduler.loadCapacitySchedulerConfiguration reads it (Hadoop's
      // TestQueueMappings passes null)
      InputStream in = getRMContext().getConfigurationProvider()
          .getConfigurationInputStream(probe, YarnConfiguration.CS_CONFIGURATION_FILE);
      if (in != null) {
        probe.addResource(in);
        probe.size();  // parses every resource now
      }
    } catch (Exception e) {  // the parser's RuntimeException, the provider's IOException or YarnException
      throw new IOException("Failed to re-init queues", e);
    }
    super.reinitialize(conf, rmContext);
    // the refreshed file may change the cluster's maximum allocation (Hadoop's
    // TestCapacityScheduler#testRefreshQueuesMaxAllocationCSLarger)
    core.allocations().configure(getConfiguration());
    core.encoder().markFull();
  }

  /** {@code yarn application -movetoqueue}: CapacityScheduler's move (ACLs, limits, usage), then the app's row again. */
  @Override
  public synchronized String moveApplication(ApplicationId appId, String targetQueueName) throws YarnException {
    String moved = super.moveApplication(appId, targetQueueName);
    core.encoder().appAdded(appId);
    return moved;
  }

  /** The largest container an app may ask for: see {@link Allocations#maximumAllocation}. */
  @Override
  public Resource getMaximumResourceCapability() {
    return core.maximumAllocation(super.getMaximumResourceCapability());
  }

  // ---- ShimHost (public only because interface methods are; not for use outside the shim) ----

  @Override
  public ShimCore core() {
    return core;
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
    return getRMContext();
  }

  /** Whether vcores are checked: with the DominantResourceCalculator the operator configured. */
  @Override
  public boolean countsVcores() {
    return getResourceCalculator() instanceof DominantResourceCalculator;
  }

  @Override
  public RMContainer liveContainer(ContainerId id) {
    FiCaSchedulerApp attempt = getCurrentAttemptForContainer(id);
    return attempt == null ? null : attempt.getLiveContainersMap().get(id);
  }

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

  /**
   * Books a container to its leaf queue, its user and every parent, as CapacityScheduler's own
   * assignment does (LeafQueue.allocateResource and the parents'); called outside the attempt's lock,
   * because the leaf's lock comes before the attempt's in CapacityScheduler's order.
   */
  @Override
  public void accountContainer(RMContainer c) {
    FiCaSchedulerApp attempt = getApplicationAttempt(c.getApplicationAttemptId());
    CSQueue queue = attempt == null ? null : (CSQueue) attempt.getQueue();
    if (queue instanceof LeafQueue) {
      ((LeafQueue) queue).recoverContainer(getClusterResource(), attempt, c);
    }
  }

  /** Every queue's limits, every active app's headroom and the queue statistics, as after CapacityScheduler's own pass. */
  @Override
  public void afterDecision() {
    Resource cluster = getClusterResource();
    getRootQueue().updateClusterResource(cluster, new ResourceLimits(cluster));
  }

  /** CapacityScheduler's own assignment on this node (container updates are already pulled). */
  @Override
  public void nativeAllocate(NodeUpdateSchedulerEvent heartbeat) {
    FiCaSchedulerNode node = getNode(heartbeat.getRMNode().getNodeID());
    if (node != null) {
      allocateContainersToNode(node);
    }
  }

  /**
   * Whether the attempt is among its leaf's active applications (within the queue's and the user's AM
   * limit): CapacityScheduler allocates to no other, and neither does the shim (docs/design/queues.md, section 3).
   */
  @Override
  public boolean isActive(FiCaSchedulerApp attempt) {
    CSQueue queue = (CSQueue) attempt.getQueue();
    return queue instanceof LeafQueue && ((LeafQueue) queue).getApplications().contains(attempt);
  }

  /**
   * Whether {@code total} more keeps the attempt's leaf and every ancestor within its maximum capacity:
   * CapacityScheduler's own check (AbstractCSQueue.canAssignToThisQueue) for each queue on the path, with
   * reservations left out of the usage, since Python's view of the cluster holds none.
   */
  @Override
  public boolean withinQueueMax(FiCaSchedulerApp attempt, Resource total) {
    Resource cluster = getClusterResource();
    for (CSQueue q = (CSQueue) attempt.getQueue(); q != null; q = q.getParent()) {
      QueueMetrics m = q.getMetrics();
      Resource used = Resources.subtract(q.getUsedResources(),
          Resource.newInstance(m.getReservedMB(), m.getReservedVirtualCores()));
      Resource max = maxResources(q);
      if (Resources.greaterThan(getResourceCalculator(), cluster, Resources.add(used, total), max)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Drops the reservation CapacityScheduler's own pass made on {@code node}, if any: the node is Python's
   * for this decision, and a reservation Python cannot see would hold queue usage and block the node.
   */
  @Override
  public void beforeDecision(FiCaSchedulerNode node) {
    RMContainer reserved = node.getReservedContainer();
    if (reserved != null) {
      dropContainerReservation(reserved);
    }
  }

  @Override
  public boolean hasQueues() {
    return true;
  }

  /**
   * The tree root first, children by path: shares as CapacityScheduler holds them (rounded to 6 decimals, as
   * floats print), the maximum as {@link #withinQueueMax} computes it.
   */
  @Override
  public List<Object[]> queueRows() {
    List<Object[]> out = new ArrayList<Object[]>();
    addQueueRows(getRootQueue(), out);
    return out;
  }

  private void addQueueRows(CSQueue q, List<Object[]> out) {
    boolean leaf = q instanceof LeafQueue;
    Resource max = maxResources(q);
    // a memory-only calculator leaves vcores at 1: send the queue's share of the cluster's instead
    int maxVcores = countsVcores() ? max.getVirtualCores()
        : (int) (getClusterResource().getVirtualCores() * q.getAbsoluteMaximumCapacity());
    out.add(new Object[] {q.getQueueName(), q.getQueuePath(), q.getParent() == null ? "" : q.getParent().getQueuePath(),
        leaf ? 1 : 0, q.getState() == QueueState.RUNNING ? 1 : 0, share(q.getCapacity()),
        share(q.getMaximumCapacity()), share(q.getAbsoluteCapacity()), share(q.getAbsoluteMaximumCapacity()),
        leaf ? ((LeafQueue) q).getUserLimit() : 100, leaf ? share(((LeafQueue) q).getUserLimitFactor()) : 1.0,
        max.getMemory(), maxVcores});
    List<CSQueue> children = q.getChildQueues();
    if (children == null) {
      return;
    }
    List<CSQueue> byPath = new ArrayList<CSQueue>(children);  // the parent's own order follows usage
    Collections.sort(byPath, new Comparator<CSQueue>() {
      @Override
      public int compare(CSQueue a, CSQueue b) {
        return a.getQueuePath().compareTo(b.getQueuePath());
      }
    });
    for (CSQueue c : byPath) {
      addQueueRows(c, out);
    }
  }

  private static Double share(float f) {
    return Math.round(f * 1e6) / 1e6;
  }

  // the most the queue and everything under it may hold: its absolute maximum of the cluster in whole
  // minimum allocations, as AbstractCSQueue.getCurrentLimitResource computes it
  private Resource maxResources(CSQueue q) {
    return Resources.multiplyAndNormalizeDown(getResourceCalculator(), getClusterResource(),
        q.getAbsoluteMaximumCapacity(), getMinimumResourceCapability());
  }

  /** LeafQueue.assignContainer's label check: no expression goes to unlabelled nodes only, X to nodes labelled X. */
  @Override
  public boolean labelsAllow(FiCaSchedulerNode node, ResourceRequest any) {
    return SchedulerUtils.checkNodeLabelExpression(node.getLabels(), any.getNodeLabelExpression());
  }

  /** Every fallback is CapacityScheduler's own pass, which keeps the queues' limits. */
  @Override
  public boolean fallsBackToOwnPass() {
    return true;
  }

  /** A policy's own resize: the node's size in the scheduler (not its registered size), then the queues' limits. */
  @Override
  public void resizeByPolicy(RMNode nm, ResourceOption resourceOption) {
    super.updateNodeResource(nm, resourceOption);
    afterDecision();
  }
}
