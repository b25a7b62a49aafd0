package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeResourceUpdateEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Test;

/** Policy resizes: applied at once, never undone by their own echo, never shrinking the maximum allocation. */
public class ResizeTest {
  private ShimHarness h;

  @After
  public void tearDown() {
    if (h != null) {
      h.stop();
    }
  }

  /** Answers each call with the next resize of n1 in {@code sizes}. */
  private static ScriptedPolicy resizing(final int... sizes) {
    ScriptedPolicy p = new ScriptedPolicy();
    p.next = new ScriptedPolicy.Answer() {
      private int i;

      @Override
      public String answer(JsonNode req) {
        int mb = sizes[Math.min(i++, sizes.length - 1)];
        return "{\"seq\":" + req.get("seq") + ",\"r\":[[\"n1:1\"," + mb + "," + mb / 1024 + "]]}";
      }
    };
    return p;
  }

  @Test
  public void aLateEchoOfAnOlderResizeDoesNotUndoTheNewerOne() throws Exception {
    h = ShimHarness.start(resizing(4096, 2048), ShimHarness.conf());
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");  // -> 4096
    h.heartbeat("n1:1");  // -> 2048
    assertEquals(2048, h.schedulerNode("n1:1").getTotalResource().getMemory());
    // The RM turns each RMNodeResourceUpdateEvent into a scheduler event that arrives later, in order.
    List<Event> echoes = new ArrayList<Event>();
    for (Event e : h.dispatcher.events) {
      if (e instanceof RMNodeResourceUpdateEvent) {
        echoes.add(e);
      }
    }
    assertEquals(2, echoes.size());
    for (Event e : echoes) {
      h.scheduler.handle(new NodeResourceUpdateSchedulerEvent(h.nodes.get("n1:1"),
          ((RMNodeResourceUpdateEvent) e).getResourceOption()));
      // after the first (older) echo as after the second: still the newest size
      assertEquals(2048, h.schedulerNode("n1:1").getTotalResource().getMemory());
    }
  }

  @Test
  public void shrinkingTheLargestNodeKeepsTheMaximumAllocation() throws Exception {
    org.apache.hadoop.conf.Configuration conf = ShimHarness.conf();
    // past the RM's start-up wait, when the largest node caps the maximum (StockParityTest has the wait)
    conf.setLong(org.apache.hadoop.yarn.conf.YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, -1);
    h = ShimHarness.start(resizing(2048), conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.heartbeat("n1:1");
    assertEquals(2048, h.schedulerNode("n1:1").getTotalResource().getMemory());
    // min(configured 8192 MB / 32 vcores, the node as it registered), not the resized 2048 MB / 2
    assertEquals(Resource.newInstance(8192, 8), h.scheduler.getMaximumResourceCapability());
  }
}
