package io.yarnctl.shim;

import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.codehaus.jackson.JsonFactory;
import org.codehaus.jackson.JsonGenerator;

/**
 * Turns RM state into wire requests: records what changed between calls and writes a delta, or the
 * whole state when a full sync is pending.
 *
 * <p>Recording methods may run on IPC threads (allocate, release) as well as the dispatcher, so the
 * pending buffers are guarded by their own lock, which is never held while calling into the scheduler.
 * {@link #build} runs under the scheduler lock.
 */
final class DeltaEncoder {

  /** One encoded request. */
  static final class Request {
    final long seq;
    final boolean full;
    final String json;

    Request(long seq, boolean full, String json) {
      this.seq = seq;
      this.full = full;
      this.json = json;
    }
  }

  private static final JsonFactory JSON = new JsonFactory();
  /** The wire version this shim speaks (schema/README.md); v2 added container kinds. */
  static final int WIRE_VERSION = 3;

  private final ShimHost scheduler;
  private final WireRows rows;
  private final Object lock = new Object();
  // Everything below is guarded by lock.
  private boolean fullPending = true;
  private long seq;
  private long answered;
  private LinkedHashSet<NodeId> nodes = new LinkedHashSet<NodeId>();
  private LinkedHashSet<String> lost = new LinkedHashSet<String>();
  private LinkedHashSet<ApplicationId> apps = new LinkedHashSet<ApplicationId>();
  // Under a scheduler with queues: the tree and each app's activation as last sent (read and written only
  // in build, under the scheduler lock).
  private List<Object[]> sentQueues;
  private final Map<ApplicationId, Boolean> sentActive = new HashMap<ApplicationId, Boolean>();
  private LinkedHashSet<String> gone = new LinkedHashSet<String>();
  private LinkedHashSet<AskKey> asks = new LinkedHashSet<AskKey>();
  private List<Object[]> alloc = new ArrayList<Object[]>();
  private List<Object[]> done = new ArrayList<Object[]>();

  /** Creates an encoder whose first request is full state. */
  DeltaEncoder(ShimHost scheduler) {
    this.scheduler = scheduler;
    this.rows = new WireRows(scheduler);
  }

  /** Makes the next request full state and drops what was recorded for a delta. */
  void markFull() {
    synchronized (lock) {
      fullPending = true;
      clearPending();
    }
  }

  /** Whether the next request will be full state. */
  boolean isFullPending() {
    synchronized (lock) {
      return fullPending;
    }
  }

  /** Records that Python answered call {@code seq}: the next delta names it as its base. */
  void answered(long answeredSeq) {
    synchronized (lock) {
      answered = answeredSeq;
    }
  }

  /** A node joined, re-registered or its capacity changed. */
  void nodeChanged(NodeId id) {
    synchronized (lock) {
      if (!fullPending) {
        nodes.add(id);
        // a NodeManager that restarts is removed and added again before the next call: it is back
        lost.remove(id.toString());
      }
    }
  }

  /** A node was removed. */
  void nodeLost(NodeId id) {
    synchronized (lock) {
      if (!fullPending) {
        nodes.remove(id);
        lost.add(id.toString());
      }
    }
  }

  /** An application was accepted. */
  void appAdded(ApplicationId id) {
    synchronized (lock) {
      if (!fullPending) {
        apps.add(id);
      }
    }
  }

  /** An application was removed. */
  void appGone(ApplicationId id) {
    rows.appGone(id);
    synchronized (lock) {
      if (!fullPending) {
        apps.remove(id);
        gone.add(id.toString());
      }
    }
  }

  /** The request table of (app, priority) may have changed. */
  void asksChanged(ApplicationId app, int priority) {
    synchronized (lock) {
      if (!fullPending) {
        asks.add(new AskKey(app, priority));
      }
    }
  }

  /** A guaranteed container was allocated (by a decision or natively); its asks changed too. */
  void allocated(RMContainer c, boolean am) {
    allocated(c, am, false);
  }

  /** A container was allocated, guaranteed or opportunistic; its asks changed too. */
  void allocated(RMContainer c, boolean am, boolean opportunistic) {
    if (opportunistic) {
      rows.opportunistic(c.getContainerId());
    }
    Object[] row = rows.alloc(c, am, opportunistic);
    synchronized (lock) {
      if (!fullPending) {
        alloc.add(row);
        asks.add(new AskKey(c.getApplicationAttemptId().getApplicationId(),
            c.getAllocatedPriority().getPriority()));
      }
    }
  }

  /** A container completed, was released or killed. */
  void completed(ContainerId id, long ms, int exitStatus) {
    rows.containerGone(id);
    synchronized (lock) {
      if (!fullPending) {
        done.add(new Object[] {id.toString(), ms, exitStatus});
      }
    }
  }

  /** Encodes the next request for a heartbeat of {@code node}; the caller holds the scheduler lock. */
  Request build(FiCaSchedulerNode node, long nowMs) {
    boolean full;
    long thisSeq;
    long base;
    Collection<NodeId> dNodes;
    Collection<String> dLost;
    Collection<String> dGone;
    Collection<ApplicationId> dApps;
    Collection<AskKey> dAsks;
    List<Object[]> dAlloc;
    List<Object[]> dDone;
    synchronized (lock) {
      // Drain first, then read live state: a change recorded after this point goes to the next call.
      full = fullPending;
      fullPending = false;
      thisSeq = ++seq;
      base = answered;
      dNodes = nodes;
      dLost = lost;
      dApps = apps;
      dGone = gone;
      dAsks = asks;
      dAlloc = alloc;
      dDone = done;
      clearPending();
    }
    Map<NodeId, FiCaSchedulerNode> allNodes = scheduler.nodesView();
    Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> allApps = scheduler.appsView();
    if (full) {
      FullState state = new FullState(allNodes, allApps, rows);
      dNodes = state.nodes;
      dLost = Collections.emptyList();
      dApps = state.apps;
      dGone = Collections.emptyList();
      dAsks = state.asks;
      dAlloc = state.alloc;
      dDone = Collections.emptyList();
    }
    List<Object[]> queueRows = scheduler.queueRows();
    boolean sendQueues = false;
    if (queueRows != null) {
      sendQueues = full || !sameRows(queueRows, sentQueues);
      sentQueues = queueRows;
      dApps = withActivationFlips(full, dApps, allApps);
    }
    try {
      StringWriter w = new StringWriter(256);
      JsonGenerator g = JSON.createJsonGenerator(w);
      g.writeStartObject();
      g.writeNumberField("v", WIRE_VERSION);
      g.writeNumberField("seq", thisSeq);
      if (!full) {
        g.writeNumberField("base", base);
      }
      g.writeBooleanField("full", full);
      g.writeNumberField("t", nowMs);
      g.writeStringField("node", node.getNodeID().toString());
      Resource used = node.getUsedResource();
      WireRows.writeRow(g, "used", used.getMemory(), rows.vcores(used), node.getNumContainers());
      if (full) {
        Resource min = scheduler.getMinimumResourceCapability();
        WireRows.writeRow(g, "min", min.getMemory(), rows.vcores(min));
      }
      List<Object[]> out = new ArrayList<Object[]>();
      for (NodeId id : dNodes) {
        FiCaSchedulerNode n = allNodes.get(id);
        if (n != null) {
          out.add(WireRows.node(id, n, scheduler.allocations().registeredSize(id)));
        }
      }
      WireRows.writeRows(g, "nodes", out);
      WireRows.writeStrings(g, "lost", dLost);
      out.clear();
      for (ApplicationId id : dApps) {
        SchedulerApplication<FiCaSchedulerApp> app = allApps.get(id);
        if (app != null) {
          out.add(rows.app(id, app));
        }
      }
      WireRows.writeRows(g, "apps", out);
      WireRows.writeStrings(g, "gone", dGone);
      out.clear();
      for (AskKey k : dAsks) {
        SchedulerApplication<FiCaSchedulerApp> app = allApps.get(k.app);
        if (app != null) {
          Object[] row = AskRows.row(k.app, k.priority, app.getCurrentAppAttempt(), rows);
          // Full state lists only non-empty tables; a delta sends the empty row as a removal.
          if (!full || !AskRows.isEmpty(row)) {
            out.add(row);
          }
        }
      }
      WireRows.writeRows(g, "asks", out);
      WireRows.writeRows(g, "alloc", dAlloc);
      WireRows.writeRows(g, "done", dDone);
      if (sendQueues) {
        WireRows.writeRows(g, "queues", queueRows);
      }
      g.writeEndObject();
      g.close();
      return new Request(thisSeq, full, w.toString());
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode request", e);
    }
  }

  // Apps whose activation changed since the last request are sent again; the host's monitor is held.
  private Collection<ApplicationId> withActivationFlips(boolean full, Collection<ApplicationId> dApps,
      Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> allApps) {
    if (full) {
      sentActive.clear();
    }
    Collection<ApplicationId> out = dApps;
    for (Map.Entry<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> e : allApps.entrySet()) {
      boolean active = rows.isActive(e.getValue());
      Boolean sent = sentActive.put(e.getKey(), active);
      if (sent != null && sent != active && !out.contains(e.getKey())) {
        if (out == dApps) {
          out = new LinkedHashSet<ApplicationId>(dApps);
        }
        out.add(e.getKey());
      }
    }
    if (sentActive.size() > allApps.size()) {
      sentActive.keySet().retainAll(allApps.keySet());
    }
    return out;
  }

  private static boolean sameRows(List<Object[]> a, List<Object[]> b) {
    if (b == null || a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  private void clearPending() {
    nodes = new LinkedHashSet<NodeId>();
    lost = new LinkedHashSet<String>();
    apps = new LinkedHashSet<ApplicationId>();
    gone = new LinkedHashSet<String>();
    asks = new LinkedHashSet<AskKey>();
    alloc = new ArrayList<Object[]>();
    done = new ArrayList<Object[]>();
  }

  /** AM flag at allocation time: the first container of an attempt of a managed-AM application. */
  boolean isAmAtAllocation(RMContainer c) {
    return rows.isAmAtAllocation(c);
  }

  /** Whether a live container is its attempt's AM, as the wire reports it. */
  boolean isAm(RMContainer c) {
    return rows.isAmInFullState(c);
  }

  /** Whether the application runs its AM outside YARN (no AM container to wait for). */
  boolean unmanagedAm(ApplicationId app) {
    return rows.unmanagedAm(app);
  }

  /** (app, priority) key of a request table. */
  static final class AskKey {
    final ApplicationId app;
    final int priority;

    AskKey(ApplicationId app, int priority) {
      this.app = app;
      this.priority = priority;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof AskKey && ((AskKey) o).app.equals(app) && ((AskKey) o).priority == priority;
    }

    @Override
    public int hashCode() {
      return app.hashCode() * 31 + priority;
    }
  }
}
