package io.yarnctl.shim;

import java.util.Collections;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.LeafQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacitySchedulerConfiguration;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The CapacityScheduler host's own choices: what it refuses at init, and what a rejected app leaves on the wire. */
public class CapacityHostTest {
  private ShimHarness h;

  @Before
  public void metricsPerTest() {
    DefaultMetricsSystem.setMiniClusterMode(true);
    QueueMetrics.clearQueueMetrics();
  }

  @After
  public void tearDown() {
    if (h != null) {
      h.stop();
    }
  }

  /** Leaves a (70%) and b (30%, up to 40%) under root, with this maximum-am-resource-percent. */
  private static Configuration twoQueues(String amPercent) {
    Configuration conf = ShimHarness.conf();
    conf.set("yarn.scheduler.capacity.root.queues", "a,b");
    conf.set("yarn.scheduler.capacity.root.a.capacity", "70");
    conf.set("yarn.scheduler.capacity.root.b.capacity", "30");
    conf.set("yarn.scheduler.capacity.root.b.maximum-capacity", "40");
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", amPercent);
    return conf;
  }

  private static void assertRefused(Configuration conf, String property) throws Exception {
    try {
      ShimHarness.startCapacity(null, conf).stop();
      fail("started with " + property + " on");
    } catch (Exception e) {
      Throwable t = e;
      while (t.getCause() != null && !(t instanceof IllegalArgumentException)) {
        t = t.getCause();
      }
      assertTrue(String.valueOf(t.getMessage()), t.getMessage() != null && t.getMessage().contains(property));
    }
  }

  @Test
  public void asynchronousSchedulingIsRefusedBecauseItBypassesThePolicy() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.setBoolean(CapacitySchedulerConfiguration.SCHEDULE_ASYNCHRONOUSLY_ENABLE, true);
    assertRefused(conf, CapacitySchedulerConfiguration.SCHEDULE_ASYNCHRONOUSLY_ENABLE);
  }

  @Test
  public void withNodeLabelsAnAskGoesOnlyToANodeOfItsPartition() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);  // as Hadoop's own CapacityScheduler tests run
    ScriptedPolicy policy = new ScriptedPolicy();
    policy.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode request) {
        return assign(request, "application_1700000000000_0001", 1, 1);
      }
    };
    h = ShimHarness.startCapacity(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    h.schedulerNode("n1:1").updateLabels(Collections.singleton("gpu"));
    ApplicationAttemptId a = h.addApp("default", 1700000000000L, 1, "bob", "MAPREDUCE", "a", 1L, null);
    h.ask(a, 1, 1024, 1, 2, true);  // no label expression: the default partition, unlabelled nodes only
    h.heartbeat("n1:1");
    assertEquals(0, h.schedulerNode("n1:1").getNumContainers());
    assertEquals("locality=1", h.cs.metrics().getRejectedByReason());
    h.heartbeat("n2:1");
    assertEquals(1, h.schedulerNode("n2:1").getNumContainers());
  }

  @Test
  public void memoryOnlyPointsToTheResourceCalculator() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.setBoolean(ShimConfig.MEMORY_ONLY, true);
    assertRefused(conf, ShimConfig.MEMORY_ONLY);
  }

  @Test
  public void anAppRejectedByCapacitySchedulerNeverReachesPython() throws Exception {
    ScriptedPolicy policy = new ScriptedPolicy();
    h = ShimHarness.startCapacity(policy, ShimHarness.conf());
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");  // full state, before the submissions
    h.addApp("nosuchqueue", 1700000000000L, 1, "alice", "MAPREDUCE", "lost", 1700000000001L, null);
    h.addApp("default", 1700000000000L, 2, "bob", "MAPREDUCE", "kept", 1700000000002L, null);
    ApplicationId rejected = ApplicationId.newInstance(1700000000000L, 1);
    String why = null;
    for (Event e : h.dispatcher.events) {
      if (e instanceof RMAppEvent && ((RMAppEvent) e).getApplicationId().equals(rejected)) {
        assertEquals(RMAppEventType.APP_REJECTED, ((RMAppEvent) e).getType());
        why = ((RMAppEvent) e).getDiagnosticMsg();
      }
    }
    // CapacityScheduler's own message (CapacityScheduler.addApplication)
    assertEquals("Application " + rejected + " submitted by user alice to unknown queue: nosuchqueue", why);
    assertNull(h.cs.appsView().get(rejected));
    h.heartbeat("n1:1");
    JsonNode apps = policy.last().get("apps");
    assertEquals(1, apps.size());
    assertEquals("application_1700000000000_0002", apps.get(0).get(0).getTextValue());
  }

  @Test
  public void whenPythonFailsCapacitySchedulersOwnPassDecidesWithinTheQueueLimits() throws Exception {
    Configuration conf = twoQueues("1.0");
    final int[] calls = {0};
    h = ShimHarness.startCapacity(new PolicyService() {
      @Override
      public String decide(String request) {
        calls[0]++;
        throw new IllegalStateException("boom");
      }
    }, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    ApplicationAttemptId b1 = h.addApp("b", 1700000000000L, 1, "bob", "MAPREDUCE", "b1", 1700000000001L, null);
    h.ask(b1, 1, 1024, 1, 8, true);
    for (int i = 0; i < 10; i++) {
      h.heartbeat("n1:1");
      h.heartbeat("n2:1");
    }
    // b may hold 40% of 16 GB (6,553 MB): six 1 GB containers, the other two stay pending; the FIFO
    // host's fallback, which knows no queues, would place all eight
    int placed = h.schedulerNode("n1:1").getNumContainers() + h.schedulerNode("n2:1").getNumContainers();
    assertEquals(6, placed);
    assertEquals(6L, h.cs.metrics().getContainersNative());
    assertEquals(h.cs.metrics().getHeartbeats(), h.cs.metrics().getFallback());
    assertTrue(calls[0] > 0);
    assertEquals("<memory:6144, vCores:6>", h.cs.getQueue("b").getUsedResources().toString());
  }

  private static String assign(JsonNode request, String app, int priority, int count) {
    return "{\"seq\":" + request.get("seq") + ",\"a\":[[\"" + app + "\"," + priority + "," + count + "]]}";
  }

  @Test
  public void anAppCapacitySchedulerHasNotActivatedIsRefusedAsAmLimitUntilItIs() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.1");  // 1,638 MB of 16 GB, rounded up to 2 GB: one 2 GB AM
    ScriptedPolicy policy = new ScriptedPolicy();
    h = ShimHarness.startCapacity(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    Resource am = Resource.newInstance(2048, 1);
    ApplicationAttemptId first = h.addApp("default", 1700000000000L, 1, "alice", "MAPREDUCE", "first", 1L, am);
    ApplicationAttemptId second = h.addApp("default", 1700000000000L, 2, "bob", "MAPREDUCE", "second", 2L, am);
    h.ask(first, 0, 1024, 1, 1, true);
    h.ask(second, 0, 1024, 1, 1, true);
    LeafQueue leaf = (LeafQueue) h.cs.getQueue("default");
    assertEquals(1, leaf.getNumActiveApplications());
    assertEquals(1, leaf.getNumPendingApplications());

    policy.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode request) {
        return assign(request, "application_1700000000000_0002", 0, 1);
      }
    };
    h.heartbeat("n1:1");
    assertEquals(0, h.schedulerNode("n1:1").getNumContainers());
    assertEquals("am-limit=1", h.cs.metrics().getRejectedByReason());

    // the first app ends: CapacityScheduler activates the second, and the same answer is applied
    h.rm.handle(new AppAttemptRemovedSchedulerEvent(first, RMAppAttemptState.FINISHED, false));
    h.rm.handle(new AppRemovedSchedulerEvent(first.getApplicationId(), RMAppState.FINISHED));
    assertEquals(1, leaf.getNumActiveApplications());
    h.heartbeat("n1:1");
    assertEquals(1, h.schedulerNode("n1:1").getNumContainers());
    assertEquals("am-limit=1", h.cs.metrics().getRejectedByReason());
  }

  @Test
  public void aReservationCapacitySchedulerMadeIsDroppedWhenPythonDecidesTheNode() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0");
    final boolean[] failing = {true};
    ScriptedPolicy policy = new ScriptedPolicy();
    policy.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode request) {
        if (failing[0]) {
          throw new IllegalStateException("down");
        }
        return "{\"seq\":" + request.get("seq") + "}";
      }
    };
    conf.setInt(ShimConfig.BREAKER_FAILURES, 1000);
    h = ShimHarness.startCapacity(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);  // never heartbeats: room in the queue, not on n1
    ApplicationAttemptId small = h.addApp("default", 1700000000000L, 1, "alice", "MAPREDUCE", "small", 1L, null);
    h.ask(small, 1, 1024, 1, 6, true);
    for (int i = 0; i < 6; i++) {
      h.heartbeat("n1:1");  // Python fails: CapacityScheduler places one container per heartbeat
    }
    assertEquals(6, h.schedulerNode("n1:1").getNumContainers());
    ApplicationAttemptId big = h.addApp("default", 1700000000000L, 2, "bob", "MAPREDUCE", "big", 2L, null);
    h.ask(big, 1, 4096, 1, 1, true);
    h.heartbeat("n1:1");  // 2 GB free for a 4 GB ask: CapacityScheduler reserves the node
    assertTrue(h.schedulerNode("n1:1").getReservedContainer() != null);
    CSQueue leaf = h.cs.getQueue("default");
    assertEquals("<memory:10240, vCores:7>", leaf.getUsedResources().toString());
    assertEquals(4096, leaf.getMetrics().getReservedMB());

    failing[0] = false;
    h.heartbeat("n1:1");  // Python answers (nothing to place): the node is its own, the reservation goes
    assertNull(h.schedulerNode("n1:1").getReservedContainer());
    assertEquals("<memory:6144, vCores:6>", leaf.getUsedResources().toString());
    assertEquals(0, leaf.getMetrics().getReservedMB());
    assertEquals(6, h.schedulerNode("n1:1").getNumContainers());
  }

  @Test
  public void aDecisionTakingAQueuePastItsMaximumIsRefusedAsQueueMax() throws Exception {
    Configuration conf = twoQueues("1.0");
    final int[] count = {7};
    ScriptedPolicy policy = new ScriptedPolicy();
    policy.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode request) {
        return assign(request, "application_1700000000000_0001", 1, count[0]);
      }
    };
    h = ShimHarness.startCapacity(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    ApplicationAttemptId b1 = h.addApp("b", 1700000000000L, 1, "bob", "MAPREDUCE", "b1", 1L, null);
    h.ask(b1, 1, 1024, 1, 8, true);
    // 40% of 16 GB is 6,553 MB, 6,144 in whole minimum allocations, as CapacityScheduler rounds it:
    // seven 1 GB containers fit the node but not the queue
    h.heartbeat("n1:1");
    assertEquals(0, h.schedulerNode("n1:1").getNumContainers());
    assertEquals("queue-max=1", h.cs.metrics().getRejectedByReason());
    count[0] = 6;
    h.heartbeat("n1:1");
    assertEquals(6, h.schedulerNode("n1:1").getNumContainers());
    assertEquals("<memory:6144, vCores:6>", h.cs.getQueue("b").getUsedResources().toString());
    count[0] = 1;
    h.heartbeat("n2:1");  // b is full: not one more, on any node
    assertEquals(0, h.schedulerNode("n2:1").getNumContainers());
    assertEquals("queue-max=2", h.cs.metrics().getRejectedByReason());
  }

  @Test
  public void theWireCarriesTheQueueTreeAndEachAppsActivation() throws Exception {
    Configuration conf = twoQueues("0.1");
    conf.set("yarn.scheduler.capacity.root.b.state", "STOPPED");
    conf.set("yarn.scheduler.capacity.root.a.minimum-user-limit-percent", "50");
    conf.set("yarn.scheduler.capacity.root.a.user-limit-factor", "2");
    ScriptedPolicy policy = new ScriptedPolicy();
    h = ShimHarness.startCapacity(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    Resource am = Resource.newInstance(2048, 1);
    ApplicationAttemptId first = h.addApp("a", 1700000000000L, 1, "alice", "MAPREDUCE", "first", 1L, am);
    h.addApp("a", 1700000000000L, 2, "bob", "MAPREDUCE", "second", 2L, am);
    h.heartbeat("n1:1");
    JsonNode full = policy.last();
    assertEquals(3, full.get("v").getIntValue());
    assertEquals("[[\"root\",\"root\",\"\",0,1,1.0,1.0,1.0,1.0,100,1.0,16384,16],"
        + "[\"a\",\"root.a\",\"root\",1,1,0.7,1.0,0.7,1.0,50,2.0,16384,16],"
        + "[\"b\",\"root.b\",\"root\",1,0,0.3,0.4,0.3,0.4,100,1.0,6144,6]]", full.get("queues").toString());
    // a's AM limit (10% of 70% of 16 GB, rounded up to 2 GB) activates one 2 GB AM: the second waits
    assertEquals("[\"application_1700000000000_0001\",\"a\",\"alice\",\"MAPREDUCE\",\"first\",[],1,1]",
        full.get("apps").get(0).toString());
    assertEquals(0, full.get("apps").get(1).get(7).getIntValue());

    h.heartbeat("n1:1");
    assertNull(policy.last().get("queues"));  // unchanged: not sent again
    assertNull(policy.last().get("apps"));

    h.rm.handle(new AppAttemptRemovedSchedulerEvent(first, RMAppAttemptState.FINISHED, false));
    h.rm.handle(new AppRemovedSchedulerEvent(first.getApplicationId(), RMAppState.FINISHED));
    h.addNode("n3", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");
    JsonNode delta = policy.last();
    assertEquals(false, delta.get("full").getBooleanValue());
    // the second app is active now: its row again, with 1; the cluster grew: every queue's maximum with it
    assertEquals("application_1700000000000_0002", delta.get("apps").get(0).get(0).getTextValue());
    assertEquals(1, delta.get("apps").get(0).get(7).getIntValue());
    assertEquals(24576, delta.get("queues").get(0).get(11).getIntValue());
  }
}
