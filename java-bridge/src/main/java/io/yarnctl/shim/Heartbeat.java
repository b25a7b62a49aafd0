package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;

/**
 * One NODE_UPDATE: container updates, then the Python decision within the deadline, or the native FIFO
 * fallback when the call fails, the response is refused or the breaker is open (stock FifoScheduler
 * when delegation is off).
 */
final class Heartbeat {

  private static final Log LOG = LogFactory.getLog(Heartbeat.class);

  private final ShimHost s;
  private final DecisionApplier applier;
  private final NativeFifo nativeFifo;
  private boolean failing;

  Heartbeat(ShimHost scheduler) {
    this.s = scheduler;
    this.applier = new DecisionApplier(scheduler);
    this.nativeFifo = new NativeFifo(scheduler, applier);
  }

  /** Handles one node heartbeat on the dispatcher thread. */
  void onNodeUpdate(NodeUpdateSchedulerEvent event) {
    ShimMetrics m = s.metrics();
    m.heartbeats.incrementAndGet();
    RMNode rmNode = event.getRMNode();
    DeltaEncoder.Request req;
    PolicyService policy;
    synchronized (s) {
      FiCaSchedulerNode node = s.nodesView().get(rmNode.getNodeID());
      if (node == null) {
        // A heartbeat queued behind the node's removal; FifoScheduler would throw here.
        LOG.debug("yarnctl shim: heartbeat from unknown node " + rmNode.getNodeID());
        return;
      }
      pullContainerUpdates(rmNode, node);
      RMContext ctx = s.rmContext();
      if (ctx.isWorkPreservingRecoveryEnabled() && !ctx.isSchedulerReadyForAllocatingContainers()) {
        return;
      }
      s.maybeLogSummary();
      if (!hasRoom(node) && !s.config().callWhenFull) {
        s.afterDecision();
        return;
      }
      policy = s.policy();
      if (policy == null) {
        decideNatively(event, node, ShimMetrics.Fallback.DISABLED);
        return;
      }
      CircuitBreaker.Admit admit = s.breaker().admit(s.now());
      if (admit == CircuitBreaker.Admit.SKIP) {
        decideNatively(event, node, ShimMetrics.Fallback.BREAKER_OPEN);
        return;
      }
      if (admit == CircuitBreaker.Admit.PROBE) {
        s.encoder().markFull();
      }
      req = s.encoder().build(node, s.now());
      if (req.full) {
        m.fullSyncs.incrementAndGet();
      }
    }
    // The call runs without the scheduler lock so AM allocate/release calls keep flowing; node events
    // are handled only on this dispatcher thread, and everything is re-validated below anyway.
    ShimMetrics.Fallback failure = null;
    String why = null;
    String raw = null;
    long t0 = System.nanoTime();
    try {
      raw = req.full && policy instanceof PolicyClient ? ((PolicyClient) policy).decideFull(req.json)
          : policy.decide(req.json);
    } catch (PolicyClient.CallException e) {
      failure = e.failure == PolicyClient.Failure.TIMEOUT ? ShimMetrics.Fallback.TIMEOUT
          : e.failure == PolicyClient.Failure.UNREACHABLE ? ShimMetrics.Fallback.UNREACHABLE
          : ShimMetrics.Fallback.ERROR;
      why = e.getMessage();
    } catch (RuntimeException e) {
      failure = ShimMetrics.Fallback.ERROR;
      why = e.toString();
    }
    m.lastLatencyMicros = (System.nanoTime() - t0) / 1000;
    synchronized (s) {
      FiCaSchedulerNode node = s.nodesView().get(rmNode.getNodeID());
      if (node == null) {
        s.encoder().markFull();
        return;
      }
      boolean resync = false;
      if (failure == null) {
        try {
          WireResponse decision = WireResponse.parse(raw, req.seq);
          DecisionApplier.Result r = applier.apply(decision, node);
          s.afterDecision();
          s.encoder().answered(req.seq);
          m.delegated.incrementAndGet();
          m.containersByPolicy.addAndGet(r.allocated.size());
          m.rejected(r.rejections);
          m.killed.addAndGet(r.killed.size());
          m.resized.addAndGet(r.resized.size());
          if (r.rejected > 0 && LOG.isDebugEnabled()) {
            LOG.debug("yarnctl shim: seq " + req.seq + " refused rows " + r.rejections);
          }
          onSuccess(m);
          return;
        } catch (WireResponse.Refused e) {
          failure = ShimMetrics.Fallback.REFUSED;
          why = "refused response: " + e.getMessage();
          resync = e.resync;
        } catch (RuntimeException e) {
          failure = ShimMetrics.Fallback.ERROR;
          why = "applying the decision failed: " + e;
          LOG.error("yarnctl shim: " + why, e);
        }
      }
      // A resync to a delta is Python working as designed (its mirror is stale); to full state it is
      // not, and left uncounted it would make every later call a full (expensive) one.
      if (!resync || req.full) {
        onFailure(m, why);
      }
      decideNatively(event, node, failure);
    }
  }

  private void onSuccess(ShimMetrics m) {
    if (s.breaker().onSuccess()) {
      m.breakerOpen = false;
      LOG.info("yarnctl shim: circuit breaker closed, the policy answered a probe; delegating again");
    }
    if (failing) {
      failing = false;
      LOG.info("yarnctl shim: the policy answers again");
    }
  }

  private void onFailure(ShimMetrics m, String why) {
    if (!failing) {
      failing = true;
      LOG.warn("yarnctl shim: heartbeat decided natively: " + truncate(why));
    } else if (LOG.isDebugEnabled()) {
      LOG.debug("yarnctl shim: heartbeat decided natively: " + truncate(why));
    }
    if (s.breaker().onFailure(s.now())) {
      m.breakerOpens.incrementAndGet();
      m.breakerOpen = true;
      LOG.warn("yarnctl shim: circuit breaker open after " + s.config().breakerFailures
          + " consecutive failures (last: " + truncate(why) + "); native FIFO until a probe every "
          + s.config().breakerProbeMs + " ms succeeds");
    }
  }

  /**
   * Decides this heartbeat without Python: the vcore-aware FIFO fallback, or with delegation switched
   * off (no policy) exactly stock FifoScheduler, whose allocations are found by diffing the node.
   */
  private void decideNatively(NodeUpdateSchedulerEvent event, FiCaSchedulerNode node, ShimMetrics.Fallback why) {
    s.metrics().fallback(why);
    s.encoder().markFull();
    int allocated;
    if (why == ShimMetrics.Fallback.DISABLED || s.fallsBackToOwnPass()) {
      Set<ContainerId> before = Allocations.running(node);
      // Container updates were already pulled, so the scheduler's own pass only assigns.
      s.nativeAllocate(event);
      List<RMContainer> added = Allocations.newSince(node, before);
      for (RMContainer c : added) {
        s.encoder().allocated(c, s.encoder().isAmAtAllocation(c));
      }
      allocated = added.size();
    } else {
      allocated = nativeFifo.decide(node).allocated.size();
      s.afterDecision();
    }
    s.metrics().containersNative.addAndGet(allocated);
  }

  private void pullContainerUpdates(RMNode rmNode, FiCaSchedulerNode node) {
    List<ContainerStatus> launched = new ArrayList<ContainerStatus>();
    List<ContainerStatus> completed = new ArrayList<ContainerStatus>();
    for (UpdatedContainerInfo info : rmNode.pullContainerUpdates()) {
      launched.addAll(info.getNewlyLaunchedContainers());
      completed.addAll(info.getCompletedContainers());
    }
    for (ContainerStatus c : launched) {
      s.launchedOnNode(c.getContainerId(), node);
    }
    for (ContainerStatus c : completed) {
      s.finished(c);
    }
  }

  private boolean hasRoom(FiCaSchedulerNode node) {
    Resource free = node.getAvailableResource();
    Resource min = s.getMinimumResourceCapability();
    return free.getMemory() >= min.getMemory()
        && (!s.countsVcores() || free.getVirtualCores() >= min.getVirtualCores());
  }

  private static String truncate(String s) {
    if (s == null) {
      return "unknown";
    }
    String line = s.split("\n", 2)[0];
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }
}
