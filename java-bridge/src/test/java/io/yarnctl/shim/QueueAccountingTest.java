package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceLimits;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AbstractCSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.LeafQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Differential: containers a Python policy places through the CapacityScheduler host are booked to
 * queues, users, QueueMetrics and headroom exactly as stock CapacityScheduler books the same
 * containers it places itself (docs/design/queues.md, section 2).
 */
public class QueueAccountingTest {

  private static final long TS = 1700000000000L;
  private static final String[] QUEUES = {"root", "a", "b"};
  private final List<ShimHarness> harnesses = new ArrayList<ShimHarness>();

  @After
  public void tearDown() {
    for (ShimHarness h : harnesses) {
      h.stop();
    }
  }

  /** Two leaves under root (a 70% up to 100%, b 30% up to 40%); every app may start its AM. */
  private static Configuration conf() {
    Configuration conf = ShimHarness.conf();
    String root = "yarn.scheduler.capacity.root";
    conf.set(root + ".queues", "a,b");
    conf.set(root + ".a.capacity", "70");
    conf.set(root + ".a.maximum-capacity", "100");
    conf.set(root + ".b.capacity", "30");
    conf.set(root + ".b.maximum-capacity", "40");
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0");
    conf.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    return conf;
  }

  private ShimHarness cluster(ShimHarness h) {
    harnesses.add(h);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    return h;
  }

  /** alice's app in a asks four 1 GB containers, bob's in b two 2 GB ones and one of 3 GB at another priority. */
  private static ApplicationAttemptId[] submit(ShimHarness h) {
    ApplicationAttemptId a1 = h.addApp("a", TS, 1, "alice", "MAPREDUCE", "a1", TS + 1, null);
    ApplicationAttemptId b1 = h.addApp("b", TS, 2, "bob", "MAPREDUCE", "b1", TS + 2, null);
    h.ask(a1, 1, 1024, 1, 4, true);
    h.ask(b1, 1, 2048, 1, 2, true);
    h.ask(b1, 2, 3072, 2, 1, true);
    return new ApplicationAttemptId[] {a1, b1};
  }

  /** Stock CapacityScheduler's placements: node -> "app priority" -> count, after heartbeats until nothing more is placed. */
  private static Map<String, Map<String, Integer>> runStock(ShimHarness h) {
    for (int round = 0; round < 12; round++) {
      h.heartbeat("n1:1");
      h.heartbeat("n2:1");
    }
    Map<String, Map<String, Integer>> placed = new TreeMap<String, Map<String, Integer>>();
    for (String node : h.nodes.keySet()) {
      Map<String, Integer> rows = new TreeMap<String, Integer>();
      for (RMContainer c : h.rm.getSchedulerNode(h.nodes.get(node).getNodeID()).getRunningContainers()) {
        String key = c.getApplicationAttemptId().getApplicationId() + " " + c.getContainer().getPriority().getPriority();
        Integer n = rows.get(key);
        rows.put(key, n == null ? 1 : n + 1);
      }
      placed.put(node, rows);
    }
    return placed;
  }

  /** A policy that places on each node what stock CapacityScheduler placed there, all in its first heartbeat. */
  private static ScriptedPolicy replaying(final Map<String, Map<String, Integer>> placed) {
    ScriptedPolicy p = new ScriptedPolicy();
    final Map<String, Boolean> done = new TreeMap<String, Boolean>();
    p.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode request) {
        String node = request.get("node").getTextValue();
        StringBuilder rows = new StringBuilder();
        if (!done.containsKey(node) && placed.containsKey(node)) {
          done.put(node, true);
          for (Map.Entry<String, Integer> e : placed.get(node).entrySet()) {
            String[] k = e.getKey().split(" ");
            rows.append(rows.length() == 0 ? "" : ",")
                .append("[\"").append(k[0]).append("\",").append(k[1]).append(',').append(e.getValue()).append(']');
          }
        }
        return "{\"seq\":" + request.get("seq") + ",\"a\":[" + rows + "]}";
      }
    };
    return p;
  }

  /** Every number the issue names, per queue, user and app, as one comparable map. */
  private static Map<String, String> books(ShimHarness h, ApplicationAttemptId[] apps) {
    CapacityScheduler cs = (CapacityScheduler) h.rm;
    Map<String, String> out = new TreeMap<String, String>();
    for (String name : QUEUES) {
      CSQueue q = cs.getQueue(name);
      QueueMetrics m = q.getMetrics();
      out.put(name + " used", q.getUsedResources().toString());
      out.put(name + " containers", String.valueOf(((AbstractCSQueue) q).getNumContainers()));
      out.put(name + " used capacity", String.valueOf(q.getUsedCapacity()));
      out.put(name + " metrics allocated", m.getAllocatedMB() + " MB " + m.getAllocatedVirtualCores() + " vcores "
          + m.getAllocatedContainers() + " containers");
      out.put(name + " metrics pending", m.getPendingMB() + " MB " + m.getPendingVirtualCores() + " vcores "
          + m.getPendingContainers() + " containers");
      out.put(name + " metrics apps", m.getAppsRunning() + " running " + m.getAppsPending() + " pending");
      out.put(name + " metrics available", m.getAvailableMB() + " MB " + m.getAvailableVirtualCores() + " vcores");
    }
    out.put("a alice used", ((LeafQueue) cs.getQueue("a")).getUser("alice").getUsed().toString());
    out.put("b bob used", ((LeafQueue) cs.getQueue("b")).getUser("bob").getUsed().toString());
    for (ApplicationAttemptId id : apps) {
      FiCaSchedulerApp app = cs.getApplicationAttempt(id);
      if (app != null) {
        out.put(id + " consumption", app.getCurrentConsumption().toString());
        out.put(id + " headroom", app.getHeadroom().toString());
      }
    }
    return out;
  }

  private static void kill(ShimHarness h, ApplicationAttemptId[] apps) {
    for (ApplicationAttemptId id : apps) {
      h.rm.handle(new AppAttemptRemovedSchedulerEvent(id, RMAppAttemptState.KILLED, false));
      h.rm.handle(new AppRemovedSchedulerEvent(id.getApplicationId(), RMAppState.KILLED));
    }
  }

  /**
   * Stock CapacityScheduler's books with every app's headroom refreshed, as CapacityScheduler itself
   * refreshes them when the cluster changes; the shim refreshes them after every decision, while stock
   * leaves an app's headroom as its last assignment computed it (the one deliberate difference).
   */
  private static Map<String, String> refreshedBooks(ShimHarness h, ApplicationAttemptId[] apps) {
    CapacityScheduler cs = (CapacityScheduler) h.rm;
    synchronized (cs) {
      cs.getRootQueue().updateClusterResource(cs.getClusterResource(), new ResourceLimits(cs.getClusterResource()));
    }
    return books(h, apps);
  }

  // QueueMetrics are per JVM, by queue name: each run gets its own, or both would read one set
  private static void forgetQueueMetrics() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
  }

  @Before
  public void metricsPerRun() {
    DefaultMetricsSystem.setMiniClusterMode(true);  // as Hadoop's tests: a source name may be registered again
    forgetQueueMetrics();
  }

  @Test
  public void pythonPlacedContainersAreBookedAsCapacitySchedulerBooksItsOwn() throws Exception {
    ShimHarness stock = cluster(new ShimHarness(conf(), new CapacityScheduler()));
    ApplicationAttemptId[] stockApps = submit(stock);
    Map<String, Map<String, Integer>> placed = runStock(stock);
    int total = 0;
    for (Map<String, Integer> rows : placed.values()) {
      for (int n : rows.values()) {
        total += n;
      }
    }
    // b may not use more than 40% (6.4 GB): stock places a1's four containers and two of b1's three
    assertEquals("stock placed " + placed, 6, total);
    Map<String, String> running = refreshedBooks(stock, stockApps);
    kill(stock, stockApps);
    Map<String, String> killed = books(stock, stockApps);
    stock.stop();
    harnesses.remove(stock);
    forgetQueueMetrics();

    ScriptedPolicy policy = replaying(placed);
    ShimHarness shim = cluster(ShimHarness.startCapacity(policy, conf()));
    ApplicationAttemptId[] shimApps = submit(shim);
    shim.heartbeat("n1:1");
    shim.heartbeat("n2:1");
    assertEquals(0, shim.cs.metrics().getFallback());
    assertEquals(0, shim.cs.metrics().rejected.get());
    assertEquals(total, shim.cs.metrics().containersByPolicy.get());
    assertEquals(running, books(shim, shimApps));

    kill(shim, shimApps);
    Map<String, String> after = books(shim, shimApps);
    assertEquals(killed, after);
    assertEquals("<memory:0, vCores:0>", after.get("root used"));
    assertEquals("0 MB 0 vcores 0 containers", after.get("a metrics allocated"));
    assertEquals("0 running 0 pending", after.get("b metrics apps"));
  }

  @Test
  public void withDelegationOffTheHostIsStockCapacityScheduler() throws Exception {
    ShimHarness stock = cluster(new ShimHarness(conf(), new CapacityScheduler()));
    ApplicationAttemptId[] stockApps = submit(stock);
    Map<String, Map<String, Integer>> stockPlaced = runStock(stock);
    Map<String, String> stockBooks = books(stock, stockApps);
    stock.stop();
    harnesses.remove(stock);
    forgetQueueMetrics();

    ShimHarness shim = cluster(ShimHarness.startCapacity(null, conf()));
    ApplicationAttemptId[] shimApps = submit(shim);
    assertEquals(stockPlaced, runStock(shim));
    assertEquals(stockBooks, books(shim, shimApps));
  }
}
