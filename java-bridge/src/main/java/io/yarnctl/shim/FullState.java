package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * What a full-state request lists: every node, every app, every request table of a current attempt
 * and every live container (with its AM flag), read from live RM state under the scheduler lock.
 */
final class FullState {

  final Collection<NodeId> nodes;
  final Collection<ApplicationId> apps;
  final List<DeltaEncoder.AskKey> asks = new ArrayList<DeltaEncoder.AskKey>();
  final List<Object[]> alloc = new ArrayList<Object[]>();

  /** Reads the full state of {@code allNodes} and {@code allApps}, building alloc rows with {@code rows}. */
  FullState(Map<NodeId, FiCaSchedulerNode> allNodes,
      Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> allApps, WireRows rows) {
    nodes = new TreeSet<NodeId>(allNodes.keySet());
    apps = allApps.keySet();
    TreeMap<ContainerId, RMContainer> live = new TreeMap<ContainerId, RMContainer>();
    for (Map.Entry<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> e : allApps.entrySet()) {
      FiCaSchedulerApp attempt = e.getValue().getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      synchronized (attempt) {
        for (Priority p : attempt.getPriorities()) {
          asks.add(new DeltaEncoder.AskKey(e.getKey(), p.getPriority()));
        }
        for (RMContainer c : attempt.getLiveContainers()) {
          live.put(c.getContainerId(), c);
        }
      }
    }
    for (RMContainer c : live.values()) {
      alloc.add(rows.alloc(c, rows.isAmInFullState(c), rows.isOpportunistic(c.getContainerId())));
    }
  }
}
