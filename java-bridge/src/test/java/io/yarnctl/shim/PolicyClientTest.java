package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The real py4j client against an in-JVM server speaking py4j's callback protocol. */
public class PolicyClientTest {
  private static final String REQ = "{\"v\":2,\"seq\":7,\"full\":true,\"t\":0,\"node\":\"n:1\",\"used\":[0,0,0]}";

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static PolicyClient.Failure failure(PolicyClient c) {
    try {
      c.decide(REQ);
    } catch (PolicyClient.CallException e) {
      return e.failure;
    }
    fail("call succeeded");
    return null;
  }

  @Test
  public void roundTripAuthTimeoutRefusedAndReconnect() throws Exception {
    int port = FakePythonServer.freePort();
    FakePythonServer py = new FakePythonServer(port, "s3cret", new ScriptedPolicy());
    PolicyClient ok = new PolicyClient("127.0.0.1", port, "s3cret", 50, 20);
    assertEquals("{\"seq\":7}", ok.decide(REQ));

    PolicyClient wrong = new PolicyClient("127.0.0.1", port, "nope", 50, 20);
    assertEquals(PolicyClient.Failure.ERROR, failure(wrong));
    wrong.close();

    py.delayMs = 300;
    long t0 = System.nanoTime();
    assertEquals(PolicyClient.Failure.TIMEOUT, failure(ok));
    long ms = (System.nanoTime() - t0) / 1000000;
    assertTrue("timed out at the deadline, took " + ms + " ms", ms >= 15 && ms < 200);

    // Nothing listens on a fresh port: connection refused.
    PolicyClient down = new PolicyClient("127.0.0.1", FakePythonServer.freePort(), "s3cret", 50, 20);
    assertEquals(PolicyClient.Failure.UNREACHABLE, failure(down));
    down.close();

    // Python goes away (calls fail) ...
    py.close();
    failure(ok);

    // Python restarts on the same port: the client reconnects by itself.
    FakePythonServer again = new FakePythonServer(port, "s3cret", new ScriptedPolicy());
    assertEquals("{\"seq\":7}", ok.decide(REQ));
    ok.close();
    again.close();
  }

  @Test
  public void schedulerConnectsWithTokenFileAndFallsBackOnTimeout() throws Exception {
    int port = FakePythonServer.freePort();
    FakePythonServer py = new FakePythonServer(port, "tok", new ScriptedPolicy());
    File token = tmp.newFile("bridge.token");
    Files.write(token.toPath(), "tok\n".getBytes(StandardCharsets.UTF_8));
    Configuration conf = ShimHarness.conf();
    conf.set(ShimConfig.TOKEN_FILE, token.getPath());
    conf.setInt(ShimConfig.PORT, port);
    conf.setInt(ShimConfig.DEADLINE_MS, 20);
    ShimHarness h = new ShimHarness(conf, new YarnctlScheduler());
    try {
      h.addNode("n1", 1, "/r1", 8192, 8);
      ApplicationAttemptId a = h.addApp(1L, 1, "u", "MAPREDUCE", "job", 1L);
      h.ask(a, 20, 1024, 1, 2, true);
      h.heartbeat("n1:1");
      ShimMetrics m = h.scheduler.metrics();
      assertEquals(1, m.getDelegated());
      assertEquals(0, m.getContainersNative());
      py.delayMs = 200;
      h.heartbeat("n1:1");
      assertEquals(1, m.getFallbackTimeout());
      assertEquals("native FIFO allocated both", 2, m.getContainersNative());
    } finally {
      h.stop();
      py.close();
    }
  }
}
