package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeResourceUpdateEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.codehaus.jackson.JsonNode;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/** Every case of schema/fixtures/decisions.json, applied by the real scheduler with n2 heartbeating. */
@RunWith(Parameterized.class)
public class DecisionsFixtureTest {

  @Parameters(name = "{0}")
  public static Collection<Object[]> cases() throws Exception {
    List<Object[]> out = new ArrayList<Object[]>();
    JsonNode doc = FixtureState.read("decisions.json");
    assertEquals("n2:45454", doc.get("node").getTextValue());
    for (JsonNode c : doc.get("cases")) {
      out.add(new Object[] {c.get("name").getTextValue(), c});
    }
    return out;
  }

  private final JsonNode c;

  public DecisionsFixtureTest(String name, JsonNode c) {
    this.c = c;
  }

  @Test
  public void appliesAsExpected() throws Exception {
    ScriptedPolicy policy = new ScriptedPolicy();
    FixtureState st = new FixtureState(policy);
    try {
      st.h.heartbeat("n1:45454");
      st.delta();
      String raw = c.has("raw") ? c.get("raw").getTextValue() : c.get("response").toString();
      policy.next = ScriptedPolicy.constant(raw);
      ShimMetrics m = st.h.scheduler.metrics();
      FiCaSchedulerNode n2 = st.h.schedulerNode("n2:45454");
      Set<ContainerId> before = Allocations.running(n2);
      long delegated = m.getDelegated();
      long byPolicy = m.getContainersByPolicy();
      long refused = m.getFallbackRefused();
      long rejected = m.getRejected();
      String rejectedBy = m.getRejectedByReason();
      int events = st.h.dispatcher.events.size();

      st.h.heartbeat("n2:45454");
      JsonNode expect = c.get("expect");
      assertEquals(2, policy.last().get("seq").getIntValue());

      if (expect.get("error").getBooleanValue()) {
        assertEquals("decided natively", refused + 1, m.getFallbackRefused());
        assertEquals(delegated, m.getDelegated());
        assertEquals(byPolicy, m.getContainersByPolicy());
        assertEquals(rejected, m.getRejected());
        policy.next = ScriptedPolicy.ECHO;
        st.h.heartbeat("n1:45454");
        assertTrue("next call is full state", policy.last().get("full").getBooleanValue());
        return;
      }
      assertEquals(delegated + 1, m.getDelegated());
      // the refusal codes, as many of each as the table lists (Python's validator checks the same list)
      Map<String, Long> wantCodes = new TreeMap<String, Long>();
      for (JsonNode code : expect.get("rejected")) {
        add(wantCodes, code.getTextValue(), 1L);
      }
      assertEquals(wantCodes, minus(codes(m.getRejectedByReason()), codes(rejectedBy)));
      assertEquals(expect.get("rejected").size(), m.getRejected() - rejected);

      // allocated: (app, priority) -> count on n2, compared as a map (node container order is a HashMap's)
      Map<String, Long> want = new TreeMap<String, Long>();
      for (JsonNode row : expect.get("allocated")) {
        add(want, row.get(0).getTextValue() + "/" + row.get(1).getIntValue(), row.get(2).getLongValue());
      }
      Map<String, Long> got = new TreeMap<String, Long>();
      for (RMContainer rc : Allocations.newSince(n2, before)) {
        add(got, rc.getApplicationAttemptId().getApplicationId() + "/" + rc.getAllocatedPriority().getPriority(), 1);
      }
      assertEquals(want, got);
      assertEquals(sum(want), m.getContainersByPolicy() - byPolicy);
      Resource used = n2.getUsedResource();
      assertTrue("never over-allocated", used.getMemory() <= 8192 && used.getVirtualCores() <= 8);

      List<String> killed = new ArrayList<String>();
      if (expect.has("killed")) {
        for (JsonNode k : expect.get("killed")) {
          killed.add(k.getTextValue());
          assertNull(k.getTextValue() + " is gone", st.h.scheduler.liveContainer(ConverterUtils.toContainerId(k.getTextValue())));
        }
      }
      assertEquals(killed.size(), m.getKilled());

      List<Event> dispatched = st.h.dispatcher.events.subList(events, st.h.dispatcher.events.size());
      int resizeEvents = 0;
      for (Event e : dispatched) {
        if (e instanceof RMNodeResourceUpdateEvent) {
          resizeEvents++;
        }
      }
      int resized = expect.has("resized") ? expect.get("resized").size() : 0;
      assertEquals(resized, resizeEvents);
      assertEquals(resized, m.getResized());
      if (expect.has("resized")) {
        for (JsonNode r : expect.get("resized")) {
          Resource total = st.h.schedulerNode(r.get(0).getTextValue()).getTotalResource();
          assertEquals(r.get(1).getIntValue(), total.getMemory());
          assertEquals(r.get(2).getIntValue(), total.getVirtualCores());
        }
      }

      // The next call is a delta carrying exactly the decision's effects.
      policy.next = ScriptedPolicy.ECHO;
      st.h.heartbeat("n1:45454");
      JsonNode d = policy.last();
      assertFalse(d.get("full").getBooleanValue());
      assertEquals(2, d.get("base").getIntValue());
      assertEquals(sum(want), d.has("alloc") ? d.get("alloc").size() : 0);
      assertEquals(killed.size(), d.has("done") ? d.get("done").size() : 0);
      if (d.has("done")) {
        for (JsonNode row : d.get("done")) {
          assertTrue(killed.contains(row.get(0).getTextValue()));
          assertEquals(-102, row.get(2).getIntValue());
        }
      }
      assertEquals(resized, d.has("nodes") ? d.get("nodes").size() : 0);
    } finally {
      st.h.stop();
    }
  }

  private static void add(Map<String, Long> m, String k, long n) {
    Long v = m.get(k);
    m.put(k, v == null ? n : v + n);
  }

  private static long sum(Map<String, Long> m) {
    long s = 0;
    for (long v : m.values()) {
      s += v;
    }
    return s;
  }

  /** {@code a=1,b=2} as a map. */
  private static Map<String, Long> codes(String byReason) {
    Map<String, Long> out = new TreeMap<String, Long>();
    for (String part : byReason.split(",")) {
      if (!part.isEmpty()) {
        String[] kv = part.split("=");
        out.put(kv[0], Long.parseLong(kv[1]));
      }
    }
    return out;
  }

  /** {@code after - before}, keeping only the codes that moved. */
  private static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
    Map<String, Long> out = new TreeMap<String, Long>();
    for (Map.Entry<String, Long> e : after.entrySet()) {
      Long b = before.get(e.getKey());
      long d = e.getValue() - (b == null ? 0 : b);
      if (d != 0) {
        out.put(e.getKey(), d);
      }
    }
    return out;
  }
}
