package io.yarnctl.shim;

import java.util.List;
import java.util.Map;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;

/**
 * What the heartbeat path (Heartbeat, DecisionApplier, NativeFifo, Allocations, DeltaEncoder, WireRows)
 * needs from the scheduler it runs in: {@link YarnctlScheduler} (a FifoScheduler) today, a
 * CapacityScheduler subclass next (docs/design/queues.md, section 7).
 *
 * <p>The host object's own monitor is the scheduler lock (the one its synchronized methods take): the
 * heartbeat path synchronizes on the host, and the scheduler actions below expect to run under it.
 */
interface ShimHost {

  // ---- scheduler state ----

  /** The scheduler's live map of nodes. */
  Map<NodeId, FiCaSchedulerNode> nodesView();

  /** The scheduler's live map of applications. */
  Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> appsView();

  /** The RM context the scheduler was given. */
  RMContext rmContext();

  /** The cluster's total resource. */
  Resource getClusterResource();

  /** The minimum allocation (the size every ask is normalized up to). */
  Resource getMinimumResourceCapability();

  /** Whether vcores are checked and reported (false when the scheduler counts memory only). */
  boolean countsVcores();

  /** The live container with this id, or null. */
  RMContainer liveContainer(ContainerId id);

  // ---- scheduler actions, under the scheduler lock ----

  /** Records that a container was reported launched on {@code node} (first half of a heartbeat). */
  void launchedOnNode(ContainerId id, FiCaSchedulerNode node);

  /** Completes a container a heartbeat reported finished. */
  void finished(ContainerStatus status);

  /** Completes {@code c} through the scheduler's own completedContainer (kills use it). */
  void completeContainer(RMContainer c, ContainerStatus status, RMContainerEventType event);

  /**
   * Books a container the shim has just allocated (app and node already updated) to the scheduler's
   * usage; called under the scheduler lock but outside the attempt's.
   */
  void accountContainer(RMContainer c);

  /** Brings headroom and queue metrics up to date at the end of a heartbeat the shim decided or skipped. */
  void afterDecision();

  /** Lets the scheduler itself decide this heartbeat (container updates are already pulled). */
  void nativeAllocate(NodeUpdateSchedulerEvent heartbeat);

  /**
   * Whether the scheduler lets {@code attempt} have containers now: CapacityScheduler activates an app only
   * within its queue's AM limit, and the shim refuses (code {@code am-limit}) what it would not give.
   */
  default boolean isActive(FiCaSchedulerApp attempt) {
    return true;
  }

  /**
   * Whether {@code total} more for {@code attempt} keeps its queue and every ancestor within their maximum
   * capacity (a scheduler without queues has no such limit); refused with {@code queue-max}.
   */
  default boolean withinQueueMax(FiCaSchedulerApp attempt, Resource total) {
    return true;
  }

  /**
   * Whether {@code node}'s partition serves {@code any}'s node label expression (a scheduler without node labels
   * has one partition); refused with {@code locality}.
   */
  default boolean labelsAllow(FiCaSchedulerNode node, ResourceRequest any) {
    return true;
  }

  /** Whether the scheduler keeps a queue tree of its own (then app rows carry its queue and activation). */
  default boolean hasQueues() {
    return false;
  }

  /** The wire's {@code queues} rows of the scheduler's tree, root first (null for a scheduler without one). */
  default List<Object[]> queueRows() {
    return null;
  }

  /** Readies {@code node} for a decision Python made: CapacityScheduler drops a reservation it holds there. */
  default void beforeDecision(FiCaSchedulerNode node) {
  }

  /**
   * Whether a heartbeat Python fails to decide goes to {@link #nativeAllocate} (the scheduler's own pass)
   * rather than the shim's vcore-aware FIFO; with delegation off it always does.
   */
  default boolean fallsBackToOwnPass() {
    return false;
  }

  /** A policy's own resize: sets the node's size in the scheduler but not its registered size. */
  void resizeByPolicy(RMNode nm, ResourceOption resourceOption);

  // ---- the shim's own parts, one set per host ----

  /** The host's shim parts. */
  ShimCore core();

  /** The request encoder. */
  default DeltaEncoder encoder() {
    return core().encoder();
  }

  /** The allocation, kill and resize helper. */
  default Allocations allocations() {
    return core().allocations();
  }

  /** The shim's configuration (null before serviceInit). */
  default ShimConfig config() {
    return core().config();
  }

  /** The shim's JMX counters (null before serviceInit). */
  default ShimMetrics metrics() {
    return core().metrics();
  }

  /** The circuit breaker in front of the policy. */
  default CircuitBreaker breaker() {
    return core().breaker();
  }

  /** The Python policy, or null when delegation is off. */
  default PolicyService policy() {
    return core().policy();
  }

  /** Milliseconds now, from the host's replaceable clock. */
  default long now() {
    return core().now();
  }

  /** Logs the one-line summary at most once a minute. */
  default void maybeLogSummary() {
    core().maybeLogSummary();
  }
}
