package io.yarnctl.shim;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
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
 * capability memory) and would put more vcores on a node than it has. Unlike it, the fallback keeps
 * ApplicationMasters within {@code yarnctl.shim.native.max-am-share} of the cluster's memory as
 * Python's engine does (apps in order, stopping at the first AM that does not fit, one AM always
 * allowed): a heartbeat Python misses must not fill the cluster with AMs whose tasks then never fit.
 * Runs under the scheduler lock.
 */
final class NativeFifo {

  private static final Log LOG = LogFactory.getLog(NativeFifo.class);

  private final ShimHost scheduler;
  private final DecisionApplier applier;

  /** Creates the fallback for {@code scheduler}, allocating through {@code applier}. */
  NativeFifo(ShimHost scheduler, DecisionApplier applier) {
    this.scheduler = scheduler;
    this.applier = applier;
  }

  private static final Priority AM_PRIORITY = Priority.newInstance(0);

  /** Allocates on {@code node} as FIFO would; returns what was allocated. */
  DecisionApplier.Result decide(FiCaSchedulerNode node) {
    DecisionApplier.Result res = new DecisionApplier.Result();
    double share = scheduler.config().nativeMaxAmShare;
    long amLimitMb = (long) (share * scheduler.getClusterResource().getMemory());
    long amUsedMb = share < 1.0 ? amMemoryInUse() : 0;
    boolean amBlocked = false;
    for (SchedulerApplication<FiCaSchedulerApp> app : scheduler.appsView().values()) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt == null || attempt.isStopped()) {
        continue;
      }
      synchronized (attempt) {
        if (SchedulerAppUtils.isBlacklisted(attempt, node, LOG)) {
          continue;
        }
        long am = share < 1.0 ? waitingAmMb(attempt) : 0;
        if (am > 0) {
          if (amBlocked || (amUsedMb > 0 && amUsedMb + am > amLimitMb)) {
            amBlocked = true;  // in order: a smaller AM does not overtake one that waits
            continue;
          }
          amUsedMb += am;
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
      if (free.getMemory() < min.getMemory()
          || scheduler.countsVcores() && free.getVirtualCores() < min.getVirtualCores()) {
        break;
      }
    }
    return res;
  }

  /** Memory the AMs of running attempts hold, as the wire marks AM containers. */
  private long amMemoryInUse() {
    long mb = 0;
    for (SchedulerApplication<FiCaSchedulerApp> app : scheduler.appsView().values()) {
      SchedulerApplicationAttempt attempt = app.getCurrentAppAttempt();
      if (attempt == null || attempt.isStopped()) {
        continue;
      }
      synchronized (attempt) {
        for (RMContainer c : attempt.getLiveContainers()) {
          if (scheduler.encoder().isAm(c)) {
            mb += c.getAllocatedResource().getMemory();
          }
        }
      }
    }
    return mb;
  }

  /** The memory of the attempt's AM ask if it waits for its AM (managed, no container yet), else 0. */
  private long waitingAmMb(FiCaSchedulerApp attempt) {
    ResourceRequest any = attempt.getResourceRequest(AM_PRIORITY, ResourceRequest.ANY);
    if (any == null || any.getNumContainers() <= 0 || !attempt.getLiveContainers().isEmpty()
        || scheduler.encoder().unmanagedAm(attempt.getApplicationId())) {
      return 0;
    }
    return (long) any.getCapability().getMemory() * any.getNumContainers();
  }

  /** How many containers of (attempt, p) this node takes: outstanding, memory, vcores, strict locality. */
  private long fit(FiCaSchedulerApp attempt, Priority p, FiCaSchedulerNode node) {
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
    if (cap.getVirtualCores() > 0 && scheduler.countsVcores()) {
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
