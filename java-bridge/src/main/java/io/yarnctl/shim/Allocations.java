package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeResourceUpdateEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Changes RM state through the RM's own paths: allocates (the host books the usage), kills and
 * resizes, and tracks node sizes for the maximum allocation.
 *
 * <p>Runs under the scheduler lock, except the node-size bookkeeping, which is thread-safe.
 */
final class Allocations {

  private final ShimHost scheduler;
  // Node sizes as registered or set by an admin (not by our resizes), for the maximum allocation.
  private final Map<NodeId, Resource> registered = new ConcurrentHashMap<NodeId, Resource>();
  // Resizes we applied ourselves, by identity, so their echo event is not applied a second time.
  private final Set<ResourceOption> ownResizes =
      Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<ResourceOption, Boolean>()));
  private volatile Resource configuredMax;
  // As AbstractYarnScheduler: for this long after the RM starts, NodeManagers are still re-registering
  // (work-preserving recovery), so the configured maximum holds, not the largest node seen so far.
  private volatile long configuredOnlyMs;
  private volatile boolean configuredOnly = true;
  private volatile Resource largest;  // componentwise max of registered, null when there are none

  /** Creates the helper for {@code scheduler}. */
  Allocations(ShimHost scheduler) {
    this.scheduler = scheduler;
  }

  /** Reads the configured maximum allocation; until then {@link #maximumAllocation} is null. */
  void configure(Configuration conf) {
    configuredMax = Resources.createResource(
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB),
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES));
    configuredOnlyMs = conf.getLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS,
        YarnConfiguration.DEFAULT_RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS);
  }

  /** Records a node's size as it registered or as an admin set it. */
  void nodeSized(NodeId id, Resource total) {
    registered.put(id, Resources.clone(total));
    largest = largestRegistered();
  }

  /** A node's size as it registered or as an admin set it; null for a node not (or no longer) known. */
  Resource registeredSize(NodeId id) {
    return registered.get(id);
  }

  /** Forgets a removed node's size. */
  void nodeRemoved(NodeId id) {
    registered.remove(id);
    largest = largestRegistered();
  }

  // Node events are rare and allocate() calls are many: recompute here, read a field there.
  private Resource largestRegistered() {
    Resource max = null;
    for (Resource r : registered.values()) {
      max = max == null ? Resources.clone(r) : Resources.componentwiseMax(max, r);
    }
    return max;
  }

  /** Whether {@code option} is the echo of a resize we applied ourselves (consumed if so). */
  boolean isOwnResize(ResourceOption option) {
    return ownResizes.remove(option);
  }

  /**
   * The largest container an app may ask for: the configured maximum, capped by the largest node as
   * it registered once the RM has run for the scheduling wait, or null before {@link #configure}. A
   * policy's resizes (OPERA, usage feedback) must not shrink it: the RM would then refuse running AMs'
   * asks and new submissions that were valid a heartbeat ago.
   */
  Resource maximumAllocation() {
    Resource max = configuredMax;
    if (max == null) {
      return null;
    }
    if (configuredOnly) {
      // the same clock and start time as AbstractYarnScheduler.getMaximumResourceCapability
      if (System.currentTimeMillis() - ResourceManager.getClusterTimeStamp() <= configuredOnlyMs) {
        return Resources.clone(max);
      }
      configuredOnly = false;
    }
    Resource nodes = largest;
    return nodes == null ? Resources.clone(max) : Resources.componentwiseMin(max, nodes);
  }

  /** Allocates one guaranteed container of {@code req} on {@code node} through the RM's own allocation path. */
  RMContainer allocateOnNode(FiCaSchedulerNode node, FiCaSchedulerApp app, Priority priority,
      ResourceRequest req, NodeType type) {
    return allocateOnNode(node, app, priority, req, type, false);
  }

  /**
   * Allocates one container of {@code req} on {@code node}; an opportunistic one (idle resources a
   * policy lends) is an ordinary container to the RM, marked as such on the wire. The caller books it
   * with {@link ShimHost#accountContainer} once it has left the attempt's lock.
   */
  RMContainer allocateOnNode(FiCaSchedulerNode node, FiCaSchedulerApp app, Priority priority,
      ResourceRequest req, NodeType type, boolean opportunistic) {
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
    DeltaEncoder encoder = scheduler.encoder();
    encoder.allocated(rmc, encoder.isAmAtAllocation(rmc), opportunistic);
    return rmc;
  }

  /** Kills through the scheduler's kill path with a preempted status (MR re-runs without a failure). */
  void killContainer(RMContainer c) {
    scheduler.completeContainer(c, SchedulerUtils.createPreemptedContainerStatus(c.getContainerId(),
        SchedulerUtils.PREEMPTED_CONTAINER), RMContainerEventType.KILL);
  }

  /** Sets a node's capacity in the scheduler now and in RMNode through its own event. */
  void resizeNode(FiCaSchedulerNode node, Resource total) {
    RMNode rmNode = node.getRMNode();
    ResourceOption option = ResourceOption.newInstance(total, RMNode.OVER_COMMIT_TIMEOUT_MILLIS_DEFAULT);
    ownResizes.add(option);
    scheduler.resizeByPolicy(rmNode, option);
    scheduler.rmContext().getDispatcher().getEventHandler()
        .handle(new RMNodeResourceUpdateEvent(rmNode.getNodeID(), option));
    scheduler.encoder().nodeChanged(rmNode.getNodeID());
  }

  /** Containers running on {@code node} now. */
  static Set<ContainerId> running(FiCaSchedulerNode node) {
    Set<ContainerId> ids = new HashSet<ContainerId>();
    for (RMContainer c : node.getRunningContainers()) {
      ids.add(c.getContainerId());
    }
    return ids;
  }

  /** Containers running on {@code node} that were not in {@code before}. */
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
