package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Re-validates a parsed decision against live RM state and applies it: resizes, then kills, then
 * assignments in order, each row whole or not at all; refused rows are counted by reason.
 *
 * <p>Runs under the scheduler lock.
 */
final class DecisionApplier {

  private static final Log LOG = LogFactory.getLog(DecisionApplier.class);

  /** What one decision did. */
  static final class Result {
    final List<RMContainer> allocated = new ArrayList<RMContainer>();
    final List<String> killed = new ArrayList<String>();
    final List<long[]> resized = new ArrayList<long[]>();
    final List<String> resizedNodes = new ArrayList<String>();
    final Map<String, Integer> rejections = new TreeMap<String, Integer>();
    int rejected;

    void reject(String reason, String row) {
      rejected++;
      Integer n = rejections.get(reason);
      rejections.put(reason, n == null ? 1 : n + 1);
      if (LOG.isDebugEnabled()) {
        LOG.debug("yarnctl shim: refused " + row + ": " + reason);
      }
    }
  }

  private final ShimHost scheduler;

  /** Creates an applier working on {@code scheduler}. */
  DecisionApplier(ShimHost scheduler) {
    this.scheduler = scheduler;
  }

  /** Applies {@code d} for a heartbeat of {@code node}. */
  Result apply(WireResponse d, FiCaSchedulerNode node) {
    Result res = new Result();
    scheduler.beforeDecision(node);
    for (WireResponse.Resize r : d.resizes) {
      resize(r, res);
    }
    for (WireResponse.Kill k : d.kills) {
      kill(k, res);
    }
    for (WireResponse.Assign a : d.assigns) {
      assign(a, node, res);
    }
    return res;
  }

  private void resize(WireResponse.Resize r, Result res) {
    String row = "r [" + r.node + ", " + r.memory + ", " + r.vcores + "]";
    FiCaSchedulerNode n = null;
    try {
      NodeId id = ConverterUtils.toNodeId(r.node);
      n = scheduler.nodesView().get(id);
    } catch (RuntimeException e) {
      // malformed id: same as unknown
    }
    if (n == null) {
      res.reject("unknown-node", row);
    } else if (r.memory < 0 || r.vcores < 0 || r.memory > Integer.MAX_VALUE || r.vcores > Integer.MAX_VALUE) {
      res.reject("bad-size", row);
    } else {
      scheduler.allocations().resizeNode(n, Resource.newInstance((int) r.memory, (int) r.vcores));
      res.resized.add(new long[] {r.memory, r.vcores});
      res.resizedNodes.add(n.getNodeID().toString());
    }
  }

  private void kill(WireResponse.Kill k, Result res) {
    String row = "k [" + k.container + "]";
    RMContainer c = null;
    try {
      ContainerId id = ConverterUtils.toContainerId(k.container);
      c = scheduler.liveContainer(id);
    } catch (RuntimeException e) {
      // malformed id: same as unknown
    }
    if (c == null) {
      res.reject("unknown-container", row);
      return;
    }
    LOG.info("yarnctl shim: killing " + c.getContainerId() + " on policy decision: " + k.reason);
    scheduler.allocations().killContainer(c);
    res.killed.add(c.getContainerId().toString());
  }

  /** Applies one assignment row whole or not at all (also the native fallback's only way to allocate). */
  void assign(WireResponse.Assign a, FiCaSchedulerNode node, Result res) {
    String row = "a [" + a.app + ", " + a.priority + ", " + a.count + (a.opportunistic ? ", 1" : "") + "]";
    if (a.count <= 0) {
      res.reject("bad-count", row);
      return;
    }
    FiCaSchedulerApp attempt = null;
    try {
      ApplicationId id = ConverterUtils.toApplicationId(a.app);
      SchedulerApplication<FiCaSchedulerApp> app = scheduler.appsView().get(id);
      attempt = app == null ? null : app.getCurrentAppAttempt();
    } catch (RuntimeException e) {
      // malformed id: same as unknown
    }
    if (attempt == null || attempt.isStopped()) {
      res.reject("unknown-app", row);
      return;
    }
    if (!scheduler.isActive(attempt)) {
      res.reject("am-limit", row);
      return;
    }
    if (a.priority < Integer.MIN_VALUE || a.priority > Integer.MAX_VALUE) {
      res.reject("unknown-priority", row);
      return;
    }
    Priority p = Priority.newInstance((int) a.priority);
    int before = res.allocated.size();
    try {
      placeRow(a, node, attempt, p, row, res);
    } finally {
      // after the attempt's lock: a CapacityScheduler host books through its queues, whose locks come first;
      // and whatever was placed before a failure is booked too, or its release would drive usage negative
      for (int i = before; i < res.allocated.size(); i++) {
        scheduler.accountContainer(res.allocated.get(i));
      }
    }
  }

  private void placeRow(WireResponse.Assign a, FiCaSchedulerNode node, FiCaSchedulerApp attempt, Priority p,
      String row, Result res) {
    // Same lock the scheduler's allocate holds while an AM updates its asks on an IPC thread.
    synchronized (attempt) {
      ResourceRequest any = attempt.getResourceRequest(p, ResourceRequest.ANY);
      if (any == null) {
        res.reject("unknown-priority", row);
        return;
      }
      if (a.count > any.getNumContainers()) {
        res.reject("over-outstanding", row);
        return;
      }
      if (SchedulerAppUtils.isBlacklisted(attempt, node, LOG)) {
        res.reject("blacklisted", row);
        return;
      }
      // node labels (the CapacityScheduler host): an ask goes only to a node of its partition
      if (!scheduler.labelsAllow(node, any)) {
        res.reject("locality", row);
        return;
      }
      Resource cap = any.getCapability();
      Resource avail = node.getAvailableResource();
      // count <= outstanding <= Integer.MAX_VALUE, so these products cannot overflow a long.
      if (a.count * cap.getMemory() > avail.getMemory()
          || scheduler.countsVcores() && a.count * cap.getVirtualCores() > avail.getVirtualCores()) {
        res.reject("no-fit", row);
        return;
      }
      // Reads queue state under the attempt's lock (app -> queue, the reverse of CapacityScheduler's order):
      // safe because every queue -> app path in 2.7.7 also holds the scheduler lock, which we hold.
      if (!scheduler.withinQueueMax(attempt, Resources.multiply(cap, (int) a.count))) {
        res.reject("queue-max", row);
        return;
      }
      // Locality as FifoScheduler: node-local (needs a live rack request), then rack-local, then off-switch.
      ResourceRequest nodeReq = attempt.getResourceRequest(p, node.getNodeName());
      ResourceRequest rackReq = attempt.getResourceRequest(p, node.getRackName());
      long rackCount = rackReq == null ? 0 : Math.max(0, rackReq.getNumContainers());
      long local = 0;
      if (nodeReq != null && rackCount > 0) {
        local = Math.min(a.count, Math.min(Math.max(0, nodeReq.getNumContainers()), rackCount));
      }
      long rack = Math.min(a.count - local, rackCount - local);
      long off = a.count - local - rack;
      if (off > 0 && !any.getRelaxLocality()) {
        res.reject("locality", row);
        return;
      }
      place(node, attempt, p, nodeReq, NodeType.NODE_LOCAL, local, a.opportunistic, res);
      place(node, attempt, p, rackReq, NodeType.RACK_LOCAL, rack, a.opportunistic, res);
      place(node, attempt, p, any, NodeType.OFF_SWITCH, off, a.opportunistic, res);
    }
  }

  private void place(FiCaSchedulerNode node, FiCaSchedulerApp attempt, Priority p, ResourceRequest req,
      NodeType type, long n, boolean opportunistic, Result res) {
    for (long i = 0; i < n; i++) {
      RMContainer c = scheduler.allocations().allocateOnNode(node, attempt, p, req, type, opportunistic);
      if (c == null) {
        // Cannot happen after the checks above under the attempt lock; log rather than loop.
        LOG.warn("yarnctl shim: " + attempt.getApplicationAttemptId() + " refused a validated container");
        return;
      }
      res.allocated.add(c);
    }
  }
}
