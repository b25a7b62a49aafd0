package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The requests the shim sends for the fixture state equal the fixture files. */
public class DeltaEncoderTest {
  private ScriptedPolicy policy;
  private FixtureState st;

  @Before
  public void setUp() throws Exception {
    policy = new ScriptedPolicy();
    st = new FixtureState(policy);
  }

  @After
  public void tearDown() {
    st.h.stop();
  }

  @Test
  public void fullThenDeltaThenDelta2MatchFixtures() throws Exception {
    st.h.heartbeat("n1:45454");
    assertEquals(FixtureState.comparable(FixtureState.read("request-full.json")),
        FixtureState.comparable(policy.last()));

    st.delta();
    st.h.heartbeat("n2:45454");
    assertEquals(FixtureState.comparable(FixtureState.read("request-delta.json")),
        FixtureState.comparable(policy.last()));

    // request-delta-2.json: app1's containers finish (at 3500 and 3900), app1 goes, n3 joins.
    complete("container_1700000000000_0001_01_000002", 1700000003500L);
    complete("container_1700000000000_0001_01_000001", 1700000003900L);
    st.h.scheduler.handle(new AppAttemptRemovedSchedulerEvent(st.app1, RMAppAttemptState.FINISHED, false));
    st.h.scheduler.handle(new AppRemovedSchedulerEvent(st.app1.getApplicationId(), RMAppState.FINISHED));
    st.h.addNode("n3", 45454, "/r1", 4096, 4);
    st.h.clock.now = 1700000004000L;
    st.h.heartbeat("n1:45454");
    assertEquals(FixtureState.read("request-delta-2.json"), policy.last());
  }

  @Test
  public void deltaAfterDecisionCarriesExactlyItsEffects() throws Exception {
    st.h.heartbeat("n1:45454");
    st.delta();
    st.h.heartbeat("n2:45454");
    policy.next = ScriptedPolicy.constant("{\"seq\":3,\"a\":[[\"application_1700000000000_0001\",20,2,1]],"
        + "\"k\":[[\"container_1700000000000_0002_01_000001\",\"t\"]]}");
    st.h.clock.now = 1700000005000L;
    st.h.heartbeat("n1:45454");
    policy.next = ScriptedPolicy.ECHO;
    st.h.heartbeat("n2:45454");
    JsonNode d = policy.last();
    assertEquals(4, d.get("seq").getIntValue());
    assertEquals(3, d.get("base").getIntValue());
    assertFalse(d.get("full").getBooleanValue());
    // the kill freed n2 entirely
    assertEquals("[0,0,0]", d.get("used").toString());
    assertEquals("[[\"container_1700000000000_0002_01_000001\",1700000005000,-102]]", d.get("done").toString());
    // two node-local maps on n1: n1 and /r1 drop from 2 to 0, ANY from 4 to 2
    assertEquals("[[\"application_1700000000000_0001\",20,1024,1,2,1,[]]]", d.get("asks").toString());
    assertEquals(2, d.get("alloc").size());
    for (JsonNode row : d.get("alloc")) {
      assertEquals("n1:45454", row.get(2).getTextValue());
      assertEquals(20, row.get(3).getIntValue());
      assertEquals(0, row.get(7).getIntValue());
      assertEquals("placed opportunistically, as the decision said", 1, row.get(8).getIntValue());
    }
    for (String k : new String[] {"nodes", "lost", "apps", "gone", "min"}) {
      assertFalse(k, d.has(k));
    }
  }

  @Test
  public void failedCallMakesTheNextRequestFull() throws Exception {
    st.h.heartbeat("n1:45454");
    policy.next = ScriptedPolicy.constant("not json");
    st.h.heartbeat("n1:45454");
    assertTrue("native FIFO filled n1", st.h.scheduler.metrics().getContainersNative() > 0);
    policy.next = ScriptedPolicy.ECHO;
    st.h.heartbeat("n2:45454");
    JsonNode r = policy.last();
    assertTrue(r.get("full").getBooleanValue());
    assertFalse(r.has("base"));
    assertEquals(3, r.get("seq").getIntValue());
    assertEquals(2, st.h.scheduler.metrics().getFullSyncs());
  }

  private void complete(String id, long at) {
    st.h.clock.now = at;
    RMContainer c = st.h.scheduler.liveContainer(ConverterUtils.toContainerId(id));
    ContainerStatus s = ContainerStatus.newInstance(c.getContainerId(), ContainerState.COMPLETE, "", 0);
    synchronized (st.h.scheduler) {
      st.h.scheduler.completedContainer(c, s, RMContainerEventType.KILL);
    }
  }
}
