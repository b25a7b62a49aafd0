package io.yarnctl.shim;

import java.io.File;
import java.io.IOException;
import java.util.Iterator;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.node.ArrayNode;
import org.codehaus.jackson.node.ObjectNode;

/** Builds the RM state of schema/fixtures/request-full.json and request-delta.json. */
final class FixtureState {
  static final File DIR = new File("../schema/fixtures");
  static final long TS = 1700000000000L;

  final ShimHarness h;
  final ApplicationAttemptId app1;
  final ApplicationAttemptId app2;

  /** The state of request-full.json, not yet sent (the next heartbeat sends it as full state). */
  FixtureState(PolicyService policy) throws Exception {
    h = ShimHarness.start(policy, ShimHarness.conf());
    h.addNode("n1", 45454, "/r1", 8192, 8);
    h.addNode("n2", 45454, "/r2", 8192, 8);
    app1 = h.addApp(TS, 1, "alice", "MAPREDUCE", "QuasiMonteCarlo", TS);
    app2 = h.addApp(TS, 2, "bob", "YARN", "DistributedShell", TS + 1000, "yarnctl.iterations=3");
    h.ask(app1, 0, 2048, 1, 1, true);
    h.allocate(app1, "n1:45454", 0, NodeType.OFF_SWITCH);             // container ..._01_000001, the AM
    h.ask(app1, 20, 1024, 1, 5, true, "n1", 3, "/r1", 3);
    h.allocate(app1, "n1:45454", 20, NodeType.NODE_LOCAL, true);      // container ..._01_000002, opportunistic
    h.ask(app1, 10, 4096, 1, 1, true);
    h.ask(app2, 0, 1024, 1, 1, true);
    h.clock.now = 1700000002000L;
  }

  /** Applies the changes request-delta.json reports: app2's AM on n2, then app2's new asks. */
  void delta() {
    h.allocate(app2, "n2:45454", 0, NodeType.OFF_SWITCH);
    h.ask(app2, 0, 1024, 2, 3, true);
    h.clock.now = 1700000003000L;
  }

  static JsonNode read(String name) throws IOException {
    return ScriptedPolicy.MAPPER.readTree(new File(DIR, name));
  }

  /**
   * Blanks what cannot be set identically from a test: the allocation time of alloc rows
   * (RMContainerImpl stamps System.currentTimeMillis() in its constructor).
   */
  static JsonNode comparable(JsonNode request) {
    ObjectNode copy = (ObjectNode) ScriptedPolicy.MAPPER.valueToTree(request);
    JsonNode alloc = copy.get("alloc");
    if (alloc != null) {
      for (Iterator<JsonNode> it = alloc.getElements(); it.hasNext();) {
        ((ArrayNode) it.next()).set(6, ScriptedPolicy.MAPPER.getNodeFactory().numberNode(0));
      }
    }
    return copy;
  }
}
