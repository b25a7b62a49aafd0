package io.yarnctl.shim;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * The fallback decision when Python cannot decide: FifoScheduler's own loop (apps in id order,
 * priorities ascending, stop at an app's first priority that gets nothing), counting vcores as well
 * as memory and allocating only through {@link DecisionApplier}, so a fallback heartbeat obeys the
 * same checks as a Python one.
 *
 * <p>Stock FifoScheduler sizes a node by memory alone ({@code assignContainer}: available memory /
 * capability memory) and would put more vcores on a node than it has. Runs under the scheduler lock.
 */
final class NativeFifo {

  private static final Log LOG = LogFactory.getLog(NativeFifo.class);

  private final YarnctlScheduler scheduler;
  private final DecisionApplier applier;

  /** Creates the fallback for {@code scheduler}, allocating through {@code applier}. */
  NativeFifo(YarnctlScheduler scheduler, DecisionApplier applier) {
    this.scheduler = scheduler;
    this.applier = applier;
  }

  /** Allocates on {@code node} as FIFO would; returns what was allocated. */
  DecisionApplier.Result decide(FiCaSchedulerNode node) {
    DecisionApplier.Result res = new DecisionApplier.Result();
    for (SchedulerApplication<FiCaSchedulerApp> app : scheduler.appsView().values()) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt == null || attempt.isStopped()) {
        continue;
      }
      synchronized (attempt) {
        if (SchedulerAppUtils.isBlacklisted(attempt, node, LOG)) {
          continue;
        }
        for (Priority p : attempt.getPriorities()) {
          ResourceRequest any = attempt.getResourceRequest(p, ResourceRequest.ANY);
          if (any == null || any.getNumContainers() <= 0) {
            continue;
          }
          long n = fit(attempt, p, node);
          if (n <= 0) {
            break;  // outstanding but nothing fits: FifoScheduler serves no later priority either
          }
          int before = res.allocated.size();
          applier.assign(new WireResponse.Assign(attempt.getApplicationId().toString(),
              p.getPriority(), n), node, res);
          if (res.allocated.size() == before) {
            break;  // as FifoScheduler: "do not assign out of order w.r.t priorities"
          }
        }
      }
      Resource free = node.getAvailableResource();
      Resource min = scheduler.getMinimumResourceCapability();
      if (free.getMemory() < min.getMemory() || free.getVirtualCores() < min.getVirtualCores()) {
        break;
      }
    }
    return res;
  }

  /** How many containers of (attempt, p) this node takes: outstanding, memory, vcores, strict locality. */
  private static long fit(FiCaSchedulerApp attempt, Priority p, FiCaSchedulerNode node) {
    ResourceRequest any = attempt.getResourceRequest(p, ResourceRequest.ANY);
    if (any == null || any.getNumContainers() <= 0) {
      return 0;
    }
    Resource cap = any.getCapability();
    Resource free = node.getAvailableResource();
    long n = any.getNumContainers();
    if (cap.getMemory() > 0) {
      n = Math.min(n, free.getMemory() / cap.getMemory());
    }
    if (cap.getVirtualCores() > 0) {
      n = Math.min(n, free.getVirtualCores() / cap.getVirtualCores());
    }
    if (!any.getRelaxLocality()) {
      // only node- or rack-local containers may go here: at most the rack request's count
      ResourceRequest rack = attempt.getResourceRequest(p, node.getRackName());
      n = Math.min(n, rack == null ? 0 : rack.getNumContainers());
    }
    return n;
  }
}
