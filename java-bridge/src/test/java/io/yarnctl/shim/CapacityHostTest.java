package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
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
  public void nodeLabelsAreRefusedBecausePoliciesSeeNone() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.setBoolean(YarnConfiguration.NODE_LABELS_ENABLED, true);
    assertRefused(conf, YarnConfiguration.NODE_LABELS_ENABLED);
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
    Configuration conf = ShimHarness.conf();
    conf.set("yarn.scheduler.capacity.root.queues", "a,b");
    conf.set("yarn.scheduler.capacity.root.a.capacity", "70");
    conf.set("yarn.scheduler.capacity.root.b.capacity", "30");
    conf.set("yarn.scheduler.capacity.root.b.maximum-capacity", "40");
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0");
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
}
