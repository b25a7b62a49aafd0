package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;

/** Encodes one (app, priority) request table as a wire {@code asks} row, and lists an app's table priorities. */
final class AskRows {

  // Hosts before racks, each alphabetically, so rows are deterministic.
  private static final Comparator<Object[]> LOCALS = new Comparator<Object[]>() {
    @Override
    public int compare(Object[] a, Object[] b) {
      String x = (String) a[0];
      String y = (String) b[0];
      boolean rx = x.startsWith("/");
      boolean ry = y.startsWith("/");
      return rx != ry ? (rx ? 1 : -1) : x.compareTo(y);
    }
  };

  private AskRows() {
  }

  /**
   * {@code [app, priority, MB, vcores, ANY count, ANY relax, [[name, count, relax], ...]]}; count 0 and
   * no locals when gone; vcores as {@code rows} reports them.
   */
  static Object[] row(ApplicationId app, int priority, FiCaSchedulerApp attempt, WireRows rows) {
    ResourceRequest any = null;
    List<Object[]> locals = new ArrayList<Object[]>();
    if (attempt != null) {
      // FifoScheduler.allocate updates the tables under the attempt's lock, on IPC threads.
      synchronized (attempt) {
        Priority p = Priority.newInstance(priority);
        any = attempt.getResourceRequest(p, ResourceRequest.ANY);
        Map<String, ResourceRequest> all = attempt.getResourceRequests(p);
        if (all != null && any != null) {
          for (ResourceRequest r : all.values()) {
            if (!ResourceRequest.ANY.equals(r.getResourceName()) && r.getNumContainers() > 0) {
              locals.add(new Object[] {r.getResourceName(), r.getNumContainers(), r.getRelaxLocality() ? 1 : 0});
            }
          }
        }
      }
    }
    if (any == null) {
      return new Object[] {app.toString(), priority, 0, 0, 0, 1, new Object[0]};
    }
    Collections.sort(locals, LOCALS);
    Resource cap = any.getCapability();
    return new Object[] {app.toString(), priority, cap.getMemory(), rows.vcores(cap),
        Math.max(0, any.getNumContainers()), any.getRelaxLocality() ? 1 : 0, locals.toArray()};
  }

  /** Priorities of the current attempt's request tables; empty when there is no app or attempt. */
  static Set<Integer> priorities(SchedulerApplication<FiCaSchedulerApp> app) {
    Set<Integer> out = new HashSet<Integer>();
    FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
    if (attempt != null) {
      synchronized (attempt) {
        for (Priority p : attempt.getPriorities()) {
          out.add(p.getPriority());
        }
      }
    }
    return out;
  }

  /** Whether the row says "no request" (ANY count 0 and no locals). */
  static boolean isEmpty(Object[] row) {
    return ((Integer) row[4]) == 0 && ((Object[]) row[6]).length == 0;
  }
}
