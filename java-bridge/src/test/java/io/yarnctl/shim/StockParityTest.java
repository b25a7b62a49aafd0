package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Test;

/** Where the shim must behave as the stock FifoScheduler it replaces (issue-23 regressions). */
public class StockParityTest {
  private ShimHarness h;

  @After
  public void tearDown() {
    if (h != null) {
      h.stop();
    }
  }

  private static Configuration conf(long schedulingWaitMs) {
    Configuration conf = ShimHarness.conf();
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, schedulingWaitMs);
    return conf;
  }

  @Test
  public void theConfiguredMaximumHoldsWhileNodesReRegisterAfterAStart() throws Exception {
    // an RM that has just (re)started: a 4 GB node is back, the 8 GB ones are not yet
    h = ShimHarness.start(null, conf(3600000L));
    h.addNode("small", 1, "/r1", 4096, 4);
    assertEquals(Resource.newInstance(8192, 32), h.scheduler.getMaximumResourceCapability());
  }

  @Test
  public void afterTheSchedulingWaitTheLargestNodeCapsTheMaximum() throws Exception {
    h = ShimHarness.start(null, conf(-1L));  // any time since the RM started is past a wait of -1 ms
    h.addNode("small", 1, "/r1", 4096, 4);
    assertEquals(Resource.newInstance(4096, 4), h.scheduler.getMaximumResourceCapability());
  }

  @Test
  public void aNodeThatReRegistersIsAddedNotLost() throws Exception {
    ScriptedPolicy policy = new ScriptedPolicy();
    h = ShimHarness.start(policy, ShimHarness.conf());
    h.addNode("n1", 1, "/r1", 8192, 8);
    FakeNode n2 = h.addNode("n2", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");  // full state
    // a NodeManager restart: the RM removes the node and adds it again before the next heartbeat
    h.scheduler.handle(new NodeRemovedSchedulerEvent(n2));
    h.scheduler.handle(new NodeAddedSchedulerEvent(n2));
    h.heartbeat("n1:1");
    JsonNode delta = policy.last();
    assertEquals(false, delta.get("full").getBooleanValue());
    assertEquals(null, delta.get("lost"));  // empty lists are left out
    assertEquals(1, delta.get("nodes").size());
    assertEquals("n2:1", delta.get("nodes").get(0).get(0).getTextValue());
  }

  @Test
  public void anAdminResizeCalledOnTheSchedulerReachesPythonAndTheRegisteredSize() throws Exception {
    ScriptedPolicy policy = new ScriptedPolicy();
    h = ShimHarness.start(policy, conf(-1L));
    FakeNode n1 = h.addNode("n1", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");
    // as TestFifoScheduler does, and as the RM's NODE_RESOURCE_UPDATE event ends up doing
    h.scheduler.updateNodeResource(n1, ResourceOption.newInstance(Resource.newInstance(4096, 4), -1));
    h.heartbeat("n1:1");
    JsonNode node = policy.last().get("nodes").get(0);
    assertEquals("[\"n1:1\",\"/r1\",4096,4,4096,4]", node.toString());
    assertEquals(Resource.newInstance(4096, 4), h.scheduler.getMaximumResourceCapability());
    // the event path records it once too (no double bookkeeping)
    h.scheduler.handle(new NodeResourceUpdateSchedulerEvent(n1,
        ResourceOption.newInstance(Resource.newInstance(6144, 6), -1)));
    h.heartbeat("n1:1");
    assertEquals("[\"n1:1\",\"/r1\",6144,6,6144,6]", policy.last().get("nodes").get(0).toString());
  }

  @Test
  public void memoryOnlyFallbackPlacesByMemoryAsStockFifo() throws Exception {
    // 1 GB containers on an 8 GB / 1 vcore node: stock FIFO places 8, vcore-aware accounting 1
    int[] placed = new int[2];
    for (int mode = 0; mode < 2; mode++) {
      Configuration conf = ShimHarness.conf();
      conf.setBoolean(ShimConfig.MEMORY_ONLY, mode == 1);
      ScriptedPolicy failing = new ScriptedPolicy();
      failing.next = ScriptedPolicy.constant("not json");  // every heartbeat falls back to the native FIFO
      h = ShimHarness.start(failing, conf);
      h.addNode("n1", 1, "/r1", 8192, 1);
      ApplicationAttemptId a = h.addApp(1L, 1, "u", "YARN", "narrow", 1L);
      h.ask(a, 0, 1024, 1, 10, true);
      h.heartbeat("n1:1");
      placed[mode] = h.schedulerNode("n1:1").getNumContainers();
      if (mode == 1) {
        assertTrue(h.scheduler.getResourceCalculator() instanceof DefaultResourceCalculator);
        assertEquals("[MEMORY]", h.scheduler.getSchedulingResourceTypes().toString());
      }
      h.stop();
      h = null;
    }
    assertEquals(1, placed[0]);
    assertEquals(8, placed[1]);
  }

  @Test
  public void memoryOnlyWireCarriesNoVcoresAndDecisionsFitByMemory() throws Exception {
    Configuration conf = ShimHarness.conf();
    conf.setBoolean(ShimConfig.MEMORY_ONLY, true);
    ScriptedPolicy policy = new ScriptedPolicy();
    final List<String> answers = new ArrayList<String>();
    policy.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode req) {
        String app = "application_1_0001";
        answers.add(app);
        return "{\"seq\":" + req.get("seq") + ",\"a\":[[\"" + app + "\",0,4]]}";
      }
    };
    h = ShimHarness.start(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 1);
    ApplicationAttemptId a = h.addApp(1L, 1, "u", "YARN", "narrow", 1L);
    h.ask(a, 0, 1024, 3, 4, true);
    h.heartbeat("n1:1");
    JsonNode full = policy.last();
    assertEquals(0, full.get("asks").get(0).get(3).getIntValue());
    assertEquals(0, full.get("min").get(1).getIntValue());
    // four 1 GB containers on a 1 vcore node: every one applied, none refused for vcores
    assertEquals(4, h.schedulerNode("n1:1").getNumContainers());
    assertEquals(4L, h.scheduler.metrics().getContainersByPolicy());
    h.heartbeat("n1:1");
    JsonNode delta = policy.last();
    assertEquals("[4096,0,4]", delta.get("used").toString());
    for (JsonNode row : delta.get("alloc")) {
      assertEquals(0, row.get(5).getIntValue());
    }
  }
}
