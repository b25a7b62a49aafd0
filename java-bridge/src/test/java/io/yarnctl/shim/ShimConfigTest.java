package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

/** Property parsing and the breaker's state machine, table-driven. */
public class ShimConfigTest {

  @Test
  public void defaults() {
    ShimConfig c = ShimConfig.from(new Configuration(false));
    assertTrue(c.enabled);
    assertEquals("127.0.0.1", c.address);
    assertEquals(25334, c.port);
    assertEquals(System.getProperty("user.home") + "/.yarnctl/bridge.token", c.tokenFile);
    assertEquals(10, c.deadlineMs);
    assertEquals(50, c.connectTimeoutMs);
    assertEquals(3, c.breakerFailures);
    assertEquals(5000, c.breakerProbeMs);
    assertFalse(c.callWhenFull);
    assertFalse(c.memoryOnly);
  }

  @Test
  public void badValuesNameTheProperty() {
    String[][] table = {
        {ShimConfig.PORT, "abc"}, {ShimConfig.PORT, "70000"}, {ShimConfig.DEADLINE_MS, "0"},
        {ShimConfig.ENABLED, "yes"}, {ShimConfig.BREAKER_FAILURES, "-1"}, {ShimConfig.ADDRESS, " "},
        {ShimConfig.MEMORY_ONLY, "maybe"},
    };
    for (String[] row : table) {
      Configuration conf = new Configuration(false);
      conf.set(row[0], row[1]);
      try {
        ShimConfig.from(conf);
        fail(row[0] + "=" + row[1] + " accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().startsWith(row[0]));
      }
    }
  }

  @Test
  public void breakerStateMachine() {
    CircuitBreaker b = new CircuitBreaker(2, 100);
    assertEquals(CircuitBreaker.Admit.CALL, b.admit(0));
    assertFalse(b.onFailure(0));
    assertFalse(b.onSuccess());              // success resets the streak
    assertFalse(b.onFailure(1));
    assertTrue(b.onFailure(2));              // second consecutive failure opens
    assertEquals(CircuitBreaker.Admit.SKIP, b.admit(101));
    assertEquals(CircuitBreaker.Admit.PROBE, b.admit(102));
    assertEquals(CircuitBreaker.Admit.SKIP, b.admit(103));
    assertFalse(b.onFailure(103));           // failed probe: still open, no second "opened"
    assertEquals(CircuitBreaker.Admit.PROBE, b.admit(202));
    assertTrue(b.onSuccess());               // successful probe closes
    assertEquals(CircuitBreaker.Admit.CALL, b.admit(203));
  }
}
