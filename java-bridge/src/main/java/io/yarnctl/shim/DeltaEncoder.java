package io.yarnctl.shim;

import java.io.IOException;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import java.util.TreeSet;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.codehaus.jackson.JsonFactory;
import org.codehaus.jackson.JsonGenerator;

/**
 * Turns RM state into wire-v1 requests: records what changed between calls and writes a delta, or the
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

  private final YarnctlScheduler scheduler;
  private final Object lock = new Object();
  // Everything below is guarded by lock.
  private boolean fullPending = true;
  private long seq;
  private long answered;
  private LinkedHashSet<NodeId> nodes = new LinkedHashSet<NodeId>();
  private LinkedHashSet<String> lost = new LinkedHashSet<String>();
  private LinkedHashSet<ApplicationId> apps = new LinkedHashSet<ApplicationId>();
  private LinkedHashSet<String> gone = new LinkedHashSet<String>();
  private LinkedHashSet<AskKey> asks = new LinkedHashSet<AskKey>();
  private List<Object[]> alloc = new ArrayList<Object[]>();
  private List<Object[]> done = new ArrayList<Object[]>();
  // The AM flag is tracked here, not read from RMAppAttempt.getMasterContainer(): that takes the
  // attempt's lock, which the dispatcher holds while it calls allocate() and waits for the app lock
  // we hold when we allocate (a lock-order inversion that deadlocked the RM). A managed AM is the
  // first container an attempt gets: nothing else can be asked for before the AM runs.
  private final Set<ApplicationAttemptId> amPlaced = new HashSet<ApplicationAttemptId>();
  private final Set<ContainerId> amContainers = new HashSet<ContainerId>();

  /** Creates an encoder whose first request is full state. */
  DeltaEncoder(YarnctlScheduler scheduler) {
    this.scheduler = scheduler;
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

  /** A node joined or its capacity changed. */
  void nodeChanged(NodeId id) {
    synchronized (lock) {
      if (!fullPending) {
        nodes.add(id);
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
    synchronized (lock) {
      for (Iterator<ApplicationAttemptId> it = amPlaced.iterator(); it.hasNext();) {
        if (it.next().getApplicationId().equals(id)) {
          it.remove();
        }
      }
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

  /** A container was allocated (by a decision or natively); its asks changed too. */
  void allocated(RMContainer c, boolean am) {
    Object[] row = allocRow(c, am);
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
    synchronized (lock) {
      amContainers.remove(id);
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
      dNodes = new TreeSet<NodeId>(allNodes.keySet());
      dLost = Collections.emptyList();
      dApps = allApps.keySet();
      dGone = Collections.emptyList();
      dAsks = new ArrayList<AskKey>();
      dAlloc = new ArrayList<Object[]>();
      dDone = Collections.emptyList();
      TreeMap<ContainerId, RMContainer> live = new TreeMap<ContainerId, RMContainer>();
      for (Map.Entry<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> e : allApps.entrySet()) {
        FiCaSchedulerApp attempt = e.getValue().getCurrentAppAttempt();
        if (attempt == null) {
          continue;
        }
        synchronized (attempt) {
          for (Priority p : attempt.getPriorities()) {
            dAsks.add(new AskKey(e.getKey(), p.getPriority()));
          }
          for (RMContainer c : attempt.getLiveContainers()) {
            live.put(c.getContainerId(), c);
          }
        }
      }
      for (RMContainer c : live.values()) {
        dAlloc.add(allocRow(c, isAmInFullState(c)));
      }
    }
    try {
      StringWriter w = new StringWriter(256);
      JsonGenerator g = JSON.createJsonGenerator(w);
      g.writeStartObject();
      g.writeNumberField("v", 1);
      g.writeNumberField("seq", thisSeq);
      if (!full) {
        g.writeNumberField("base", base);
      }
      g.writeBooleanField("full", full);
      g.writeNumberField("t", nowMs);
      g.writeStringField("node", node.getNodeID().toString());
      Resource used = node.getUsedResource();
      writeRow(g, "used", used.getMemory(), used.getVirtualCores(), node.getNumContainers());
      if (full) {
        Resource min = scheduler.getMinimumResourceCapability();
        writeRow(g, "min", min.getMemory(), min.getVirtualCores());
      }
      List<Object[]> rows = new ArrayList<Object[]>();
      for (NodeId id : dNodes) {
        FiCaSchedulerNode n = allNodes.get(id);
        if (n != null) {
          Resource total = n.getTotalResource();
          rows.add(new Object[] {id.toString(), n.getRMNode().getRackName(), total.getMemory(),
              total.getVirtualCores()});
        }
      }
      writeRows(g, "nodes", rows);
      writeStrings(g, "lost", dLost);
      rows.clear();
      for (ApplicationId id : dApps) {
        SchedulerApplication<FiCaSchedulerApp> app = allApps.get(id);
        if (app != null) {
          rows.add(appRow(id, app));
        }
      }
      writeRows(g, "apps", rows);
      writeStrings(g, "gone", dGone);
      rows.clear();
      for (AskKey k : dAsks) {
        SchedulerApplication<FiCaSchedulerApp> app = allApps.get(k.app);
        if (app != null) {
          Object[] row = AskRows.row(k.app, k.priority, app.getCurrentAppAttempt());
          // Full state lists only non-empty tables; a delta sends the empty row as a removal.
          if (!full || !AskRows.isEmpty(row)) {
            rows.add(row);
          }
        }
      }
      writeRows(g, "asks", rows);
      writeRows(g, "alloc", dAlloc);
      writeRows(g, "done", dDone);
      g.writeEndObject();
      g.close();
      return new Request(thisSeq, full, w.toString());
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode request", e);
    }
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

  private Object[] appRow(ApplicationId id, SchedulerApplication<FiCaSchedulerApp> app) {
    RMApp rm = scheduler.rmContext().getRMApps().get(id);
    String queue = rm == null ? null : rm.getQueue();
    if (queue == null) {
      queue = app.getQueue().getQueueName();
    }
    String user = rm == null ? null : rm.getUser();
    if (user == null) {
      user = app.getUser();
    }
    TreeSet<String> tags = new TreeSet<String>();
    if (rm != null && rm.getApplicationTags() != null) {
      tags.addAll(rm.getApplicationTags());
    }
    return new Object[] {id.toString(), queue, user, rm == null ? "" : nz(rm.getApplicationType()),
        rm == null ? "" : nz(rm.getName()), tags.toArray(new String[0]), rm == null ? 0L : rm.getSubmitTime()};
  }

  /** AM flag at allocation time: the first container of an attempt of a managed-AM application. */
  boolean isAmAtAllocation(RMContainer c) {
    ApplicationAttemptId attempt = c.getApplicationAttemptId();
    if (c.getAllocatedPriority().getPriority() != 0 || unmanagedAm(attempt.getApplicationId())) {
      return false;
    }
    synchronized (lock) {
      if (!amPlaced.add(attempt)) {
        return false;
      }
      amContainers.add(c.getContainerId());
      return true;
    }
  }

  private boolean isAmInFullState(RMContainer c) {
    synchronized (lock) {
      if (amContainers.contains(c.getContainerId())) {
        return true;
      }
    }
    return c.isAMContainer();  // set by the attempt once the AM container is acquired
  }

  private boolean unmanagedAm(ApplicationId app) {
    // RMApp's getters read final fields without locks (unlike RMAppAttempt's)
    RMApp rm = scheduler.rmContext().getRMApps().get(app);
    ApplicationSubmissionContext ctx = rm == null ? null : rm.getApplicationSubmissionContext();
    return ctx != null && ctx.getUnmanagedAM();
  }

  private static Object[] allocRow(RMContainer c, boolean am) {
    Resource r = c.getAllocatedResource();
    return new Object[] {c.getContainerId().toString(), c.getApplicationAttemptId().getApplicationId().toString(),
        c.getAllocatedNode().toString(), c.getAllocatedPriority().getPriority(), r.getMemory(),
        r.getVirtualCores(), c.getCreationTime(), am ? 1 : 0};
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  private static void writeRow(JsonGenerator g, String key, long... values) throws IOException {
    g.writeArrayFieldStart(key);
    for (long v : values) {
      g.writeNumber(v);
    }
    g.writeEndArray();
  }

  private static void writeStrings(JsonGenerator g, String key, Collection<String> values) throws IOException {
    if (values.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(key);
    for (String s : values) {
      g.writeString(s);
    }
    g.writeEndArray();
  }

  // Empty arrays are left out: the payload is the latency budget, and absent means empty.
  private static void writeRows(JsonGenerator g, String key, List<Object[]> rows) throws IOException {
    if (rows.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(key);
    for (Object[] row : rows) {
      writeValue(g, row);
    }
    g.writeEndArray();
  }

  static void writeValue(JsonGenerator g, Object v) throws IOException {
    if (v instanceof Object[]) {
      g.writeStartArray();
      for (Object o : (Object[]) v) {
        writeValue(g, o);
      }
      g.writeEndArray();
    } else if (v instanceof String) {
      g.writeString((String) v);
    } else if (v instanceof Integer) {
      g.writeNumber((Integer) v);
    } else if (v instanceof Long) {
      g.writeNumber((Long) v);
    } else {
      throw new IOException("cannot encode " + v);
    }
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
