package io.yarnctl.shim;

import java.io.IOException;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.codehaus.jackson.JsonGenerator;

/**
 * Builds wire {@code nodes}, {@code apps} and {@code alloc} rows from RM objects and writes rows as
 * JSON, tracking which containers are AMs for the {@code alloc} row's AM flag.
 *
 * <p>The AM bookkeeping may be touched from IPC threads as well as the dispatcher, so it is guarded by
 * its own lock, which is never held while calling into the scheduler.
 */
final class WireRows {

  private final ShimHost scheduler;
  private final Object lock = new Object();
  // The AM flag is tracked here, not read from RMAppAttempt.getMasterContainer(): that takes the
  // attempt's lock, which the dispatcher holds while it calls allocate() and waits for the app lock
  // we hold when we allocate (a lock-order inversion that deadlocked the RM). A managed AM is the
  // first container an attempt gets: nothing else can be asked for before the AM runs.
  // Both sets are guarded by lock.
  private final Set<ApplicationAttemptId> amPlaced = new HashSet<ApplicationAttemptId>();
  private final Set<ContainerId> amContainers = new HashSet<ContainerId>();
  private final Set<ContainerId> opportunisticContainers = new HashSet<ContainerId>();

  /** Creates a row builder reading app metadata from {@code scheduler}'s RM context. */
  WireRows(ShimHost scheduler) {
    this.scheduler = scheduler;
  }

  /**
   * {@code [node, rack, MB, vcores, registered MB, registered vcores]}: a node's total capacity now and
   * as it registered (or an admin set it), which a policy's own resizes never change.
   */
  static Object[] node(NodeId id, FiCaSchedulerNode n, Resource registered) {
    Resource total = n.getTotalResource();
    Resource base = registered == null ? total : registered;
    return new Object[] {id.toString(), n.getRMNode().getRackName(), total.getMemory(),
        total.getVirtualCores(), base.getMemory(), base.getVirtualCores()};
  }

  /**
   * {@code [app, queue, user, type, name, [tags], submit ms]}: the RMApp's view, else the scheduler's; under a
   * scheduler with queues, the queue it placed the app in and, last, whether it has activated it (1/0).
   */
  Object[] app(ApplicationId id, SchedulerApplication<FiCaSchedulerApp> app) {
    RMApp rm = scheduler.rmContext().getRMApps().get(id);
    boolean queues = scheduler.hasQueues();
    // FifoScheduler puts every app in "default": the name the user gave is the one worth a policy's while
    String queue = rm == null || queues ? null : rm.getQueue();
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
    Object[] row = {id.toString(), queue, user, rm == null ? "" : nz(rm.getApplicationType()),
        rm == null ? "" : nz(rm.getName()), tags.toArray(new String[0]), rm == null ? 0L : rm.getSubmitTime()};
    if (!queues) {
      return row;
    }
    Object[] withActive = Arrays.copyOf(row, row.length + 1);
    withActive[row.length] = isActive(app) ? 1 : 0;
    return withActive;
  }

  /** Whether the scheduler has activated the app's current attempt (false without one). */
  boolean isActive(SchedulerApplication<FiCaSchedulerApp> app) {
    FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
    return attempt != null && scheduler.isActive(attempt);
  }

  /**
   * {@code [container, app, node, priority, MB, vcores, created ms, am, opportunistic]}: one live
   * container (wire v2 added the last item).
   */
  Object[] alloc(RMContainer c, boolean am, boolean opportunistic) {
    Resource r = c.getAllocatedResource();
    return new Object[] {c.getContainerId().toString(), c.getApplicationAttemptId().getApplicationId().toString(),
        c.getAllocatedNode().toString(), c.getAllocatedPriority().getPriority(), r.getMemory(),
        vcores(r), c.getCreationTime(), am ? 1 : 0, opportunistic ? 1 : 0};
  }

  /**
   * The vcores the wire reports for a container, an ask or a node's use: none in memory-only mode,
   * where the RM normalizes every ask to 1 vcore and never checks them, so Python sees what is counted.
   */
  int vcores(Resource r) {
    return scheduler.countsVcores() ? r.getVirtualCores() : 0;
  }

  /** Marks a container a policy placed on opportunistic resources, until it is gone. */
  void opportunistic(ContainerId id) {
    synchronized (lock) {
      opportunisticContainers.add(id);
    }
  }

  /** Whether a live container was placed opportunistically (for full-state rows). */
  boolean isOpportunistic(ContainerId id) {
    synchronized (lock) {
      return opportunisticContainers.contains(id);
    }
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

  /** AM flag for a full-state row: recorded at allocation, else as the attempt marked it. */
  boolean isAmInFullState(RMContainer c) {
    synchronized (lock) {
      if (amContainers.contains(c.getContainerId())) {
        return true;
      }
    }
    return c.isAMContainer();  // set by the attempt once the AM container is acquired
  }

  /** Forgets the attempts of a removed application. */
  void appGone(ApplicationId id) {
    synchronized (lock) {
      for (Iterator<ApplicationAttemptId> it = amPlaced.iterator(); it.hasNext();) {
        if (it.next().getApplicationId().equals(id)) {
          it.remove();
        }
      }
    }
  }

  /** Forgets a completed, released or killed container. */
  void containerGone(ContainerId id) {
    synchronized (lock) {
      amContainers.remove(id);
      opportunisticContainers.remove(id);
    }
  }

  /** Writes {@code key: [values...]}. */
  static void writeRow(JsonGenerator g, String key, long... values) throws IOException {
    g.writeArrayFieldStart(key);
    for (long v : values) {
      g.writeNumber(v);
    }
    g.writeEndArray();
  }

  /** Writes {@code key: [strings...]}, or nothing when there are none. */
  static void writeStrings(JsonGenerator g, String key, Collection<String> values) throws IOException {
    if (values.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(key);
    for (String s : values) {
      g.writeString(s);
    }
    g.writeEndArray();
  }

  /** Writes {@code key: [rows...]}, or nothing when there are none. */
  // Empty arrays are left out: the payload is the latency budget, and absent means empty.
  static void writeRows(JsonGenerator g, String key, List<Object[]> rows) throws IOException {
    if (rows.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(key);
    for (Object[] row : rows) {
      writeValue(g, row);
    }
    g.writeEndArray();
  }

  /** Writes a row value: a String, an Integer, a Long or an array of them. */
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
    } else if (v instanceof Double) {
      g.writeNumber((Double) v);
    } else {
      throw new IOException("cannot encode " + v);
    }
  }

  boolean unmanagedAm(ApplicationId app) {
    // RMApp's getters read final fields without locks (unlike RMAppAttempt's)
    RMApp rm = scheduler.rmContext().getRMApps().get(app);
    ApplicationSubmissionContext ctx = rm == null ? null : rm.getApplicationSubmissionContext();
    return ctx != null && ctx.getUnmanagedAM();
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
