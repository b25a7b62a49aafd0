package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Test;

/** Failures of every kind leave the heartbeat to native FIFO, move the counters and drive the breaker. */
public class FallbackTest {
  private ShimHarness h;

  private ShimMetrics setUp(PolicyService policy, Configuration conf) throws Exception {
    h = ShimHarness.start(policy, conf);
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    ApplicationAttemptId a = h.addApp(1L, 1, "u", "MAPREDUCE", "job", 1L);
    // 4 containers: native FIFO places them all and the node keeps room, so calls continue
    h.ask(a, 20, 1024, 1, 4, true);
    return h.scheduler.metrics();
  }

  @After
  public void tearDown() {
    if (h != null) {
      h.stop();
    }
  }

  private static final class Throwing implements PolicyService {
    int calls;

    @Override
    public String decide(String request) {
      calls++;
      throw new IllegalStateException("boom");
    }
  }

  @Test
  public void nativeFallbackCountsVcoresWhereStockFifoWouldNot() throws Exception {
    // 1 GB / 3 vcore containers on 8 GB / 8 vcore nodes: memory alone would fit 8, vcores fit 2.
    h = ShimHarness.start(new Throwing(), ShimHarness.conf());
    h.addNode("n1", 1, "/r1", 8192, 8);
    ApplicationAttemptId a = h.addApp(1L, 1, "u", "YARN", "wide", 1L);
    h.ask(a, 0, 1024, 3, 8, true);
    h.heartbeat("n1:1");
    assertEquals(2, h.schedulerNode("n1:1").getNumContainers());
    assertEquals(2, h.schedulerNode("n1:1").getAvailableResource().getVirtualCores());
    assertEquals(2L, h.scheduler.metrics().getContainersNative());
    assertEquals(1L, h.scheduler.metrics().getFallbackError());
  }

  @Test
  public void nativeFallbackKeepsAmsWithinTheirShare() throws Exception {
    // eight 2 GB AMs on two 8 GB nodes would take all 16 GB; half the memory is four of them
    for (String share : new String[] {null, "1"}) {
      org.apache.hadoop.conf.Configuration conf = ShimHarness.conf();
      if (share != null) {
        conf.set(ShimConfig.NATIVE_MAX_AM_SHARE, share);
      }
      h = ShimHarness.start(new Throwing(), conf);
      h.addNode("n1", 1, "/r1", 8192, 8);
      h.addNode("n2", 1, "/r1", 8192, 8);
      for (int i = 1; i <= 8; i++) {
        ApplicationAttemptId a = h.addApp(1L, i, "u", "MAPREDUCE", "job" + i, i,
            org.apache.hadoop.yarn.api.records.Resource.newInstance(2048, 1));
        h.ask(a, 0, 2048, 1, 1, true);
      }
      h.heartbeat("n1:1");
      h.heartbeat("n2:1");
      int placed = h.schedulerNode("n1:1").getNumContainers() + h.schedulerNode("n2:1").getNumContainers();
      assertEquals(share == null ? 4 : 8, placed);
      h.stop();
      h = null;
    }
  }

  @Test
  public void eachFailureKindIsNativeAndCounted() throws Exception {
    String[][] table = {
        // answer, counter that must move
        {"garbage", "FallbackRefused"},
        {"{\"seq\": 1, \"resync\": true}", "FallbackRefused"},
        {"{\"seq\": 1, \"err\": \"policy crashed\"}", "FallbackRefused"},
        {"{\"seq\": 99}", "FallbackRefused"},
        {"{\"seq\": 1, \"a\": {}}", "FallbackRefused"},
        {"{\"seq\": 1, \"x\": 1}", "FallbackRefused"},
        {null, "FallbackRefused"},
    };
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName(ShimMetrics.OBJECT_NAME);
    for (String[] row : table) {
      ScriptedPolicy p = new ScriptedPolicy();
      p.next = ScriptedPolicy.constant(row[0]);
      ShimMetrics m = setUp(p, ShimHarness.conf());
      h.heartbeat("n1:1");
      assertEquals(row[0], 1L, mbs.getAttribute(name, row[1]));
      assertEquals(row[0], 1L, mbs.getAttribute(name, "Fallback"));
      assertEquals(row[0], 0L, mbs.getAttribute(name, "Delegated"));
      assertEquals(row[0], 4L, m.getContainersNative());
      assertEquals(row[0], 4, h.schedulerNode("n1:1").getNumContainers());
      // the next call carries full state, including what FIFO allocated
      p.next = ScriptedPolicy.ECHO;
      h.heartbeat("n2:1");
      JsonNode next = p.last();
      assertTrue(row[0], next.get("full").getBooleanValue());
      assertEquals(row[0], 4, next.get("alloc").size());
      assertEquals(row[0], 1L, mbs.getAttribute(name, "Delegated"));
      h.stop();
      h = null;
    }
  }

  @Test
  public void breakerOpensAfterNFailuresAndAProbeClosesIt() throws Exception {
    Throwing bad = new Throwing();
    Configuration conf = ShimHarness.conf();
    conf.setInt(ShimConfig.BREAKER_FAILURES, 3);
    conf.setInt(ShimConfig.BREAKER_PROBE_MS, 5000);
    ShimMetrics m = setUp(bad, conf);
    for (int i = 0; i < 3; i++) {
      h.heartbeat("n" + (1 + i % 2) + ":1");
    }
    assertEquals(3, m.getFallbackError());
    assertTrue(m.isBreakerOpen());
    assertEquals(1, m.getBreakerOpens());
    // open: heartbeats stay native without calling Python
    h.heartbeat("n2:1");
    assertEquals(3, bad.calls);
    assertEquals(1, m.getFallbackBreakerOpen());
    // the probe interval passes; the probe fails and the breaker stays open
    h.clock.now += 5000;
    h.heartbeat("n2:1");
    assertEquals(4, bad.calls);
    assertTrue(m.isBreakerOpen());
    // Python is healthy again: the next probe sends full state and closes the breaker
    ScriptedPolicy good = new ScriptedPolicy();
    h.scheduler.setPolicy(good);
    h.clock.now += 4999;
    h.heartbeat("n2:1");
    assertEquals(0, good.requests.size());
    h.clock.now += 1;
    h.heartbeat("n2:1");
    assertEquals(1, good.requests.size());
    assertTrue(good.last().get("full").getBooleanValue());
    assertFalse(m.isBreakerOpen());
    assertEquals(1, m.getBreakerOpens());
    assertEquals(1, m.getDelegated());
    // and the one after is a delta again
    h.heartbeat("n2:1");
    assertFalse(good.last().get("full").getBooleanValue());
  }

  @Test
  public void resyncToADeltaIsNotAFailure() throws Exception {
    ScriptedPolicy p = new ScriptedPolicy();
    p.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode req) {
        // a stale mirror: full state is accepted, every delta is answered resync
        return "{\"seq\":" + req.get("seq") + (req.get("full").getBooleanValue() ? "}" : ",\"resync\":true}");
      }
    };
    ShimMetrics m = setUp(p, ShimHarness.conf());
    for (int i = 0; i < 6; i++) {
      h.heartbeat("n2:1");
    }
    assertEquals(3, m.getFallbackRefused());
    assertFalse(m.isBreakerOpen());
    assertEquals(3, m.getFullSyncs());
  }

  @Test
  public void resyncToFullStateOpensTheBreaker() throws Exception {
    ScriptedPolicy p = new ScriptedPolicy();
    p.next = new ScriptedPolicy.Answer() {
      @Override
      public String answer(JsonNode req) {
        return "{\"seq\":" + req.get("seq") + ",\"resync\":true}";
      }
    };
    ShimMetrics m = setUp(p, ShimHarness.conf());
    for (int i = 0; i < 5; i++) {
      h.heartbeat("n2:1");
    }
    // every call is full after a refusal; three refused full calls open the breaker
    assertEquals(3, m.getFallbackRefused());
    assertTrue(m.isBreakerOpen());
    assertEquals(2, m.getFallbackBreakerOpen());
  }

  @Test
  public void noTokenMeansNativeAndCounted() throws Exception {
    ShimMetrics m = setUp(null, ShimHarness.conf());
    h.heartbeat("n1:1");
    assertEquals(1, m.getFallbackDisabled());
    assertEquals(4, m.getContainersNative());
    assertEquals(1, m.getHeartbeats());
  }

  @Test
  public void fullNodeIsNotSentUnlessCallWhenFull() throws Exception {
    ScriptedPolicy p = new ScriptedPolicy();
    p.next = ScriptedPolicy.constant("garbage");
    ShimMetrics m = setUp(p, ShimHarness.conf());
    h.ask(h.scheduler.getAppsInQueue("default").get(0), 20, 1024, 1, 8, true);
    h.heartbeat("n1:1");             // refused -> FIFO fills n1
    int calls = p.requests.size();
    h.heartbeat("n1:1");             // n1 is full: no call
    assertEquals(calls, p.requests.size());
    assertEquals(2, m.getHeartbeats());
    h.stop();

    Configuration conf = ShimHarness.conf();
    conf.setBoolean(ShimConfig.CALL_WHEN_FULL, true);
    p = new ScriptedPolicy();
    p.next = ScriptedPolicy.constant("garbage");
    setUp(p, conf);
    h.heartbeat("n1:1");
    p.next = ScriptedPolicy.ECHO;
    h.heartbeat("n1:1");
    assertEquals(2, p.requests.size());
  }
}
