package io.yarnctl.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.conf.ConfigurationProvider;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.codehaus.jackson.JsonNode;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** {@code rmadmin -refreshQueues} and {@code -movetoqueue} through the shim on CapacityScheduler (queue plan, step 6). */
public class QueueRefreshTest {

  /** capacity-scheduler.xml from a directory, as a file-system based provider serves it to an HA pair. */
  static final class DirProvider extends ConfigurationProvider {
    private final File dir;

    DirProvider(File dir) {
      this.dir = dir;
    }

    @Override
    public InputStream getConfigurationInputStream(Configuration conf, String name) throws IOException {
      File f = new File(dir, name);
      return f.exists() ? new FileInputStream(f) : null;
    }

    @Override
    public void initInternal(Configuration conf) {
    }

    @Override
    public void closeInternal() {
    }
  }

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();
  private ShimHarness h;
  private ScriptedPolicy policy;

  @Before
  public void start() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    QueueMetrics.clearQueueMetrics();
    policy = new ScriptedPolicy();
    h = ShimHarness.startCapacity(policy, ShimHarness.conf());  // the test jar's tree: root.default
    h.addNode("n1", 1, "/r1", 8192, 8);
    h.addNode("n2", 1, "/r1", 8192, 8);
    h.ctx.setConfigurationProvider(new DirProvider(tmp.getRoot()));
  }

  @After
  public void stop() {
    h.stop();
  }

  private void write(String text) throws IOException {
    Files.write(new File(tmp.getRoot(), YarnConfiguration.CS_CONFIGURATION_FILE).toPath(),
        text.getBytes(StandardCharsets.UTF_8));
  }

  private void writeTree(String... nameValue) throws IOException {
    StringBuilder xml = new StringBuilder("<configuration>\n");
    for (int i = 0; i < nameValue.length; i += 2) {
      xml.append("  <property><name>yarn.scheduler.capacity.").append(nameValue[i]).append("</name><value>")
          .append(nameValue[i + 1]).append("</value></property>\n");
    }
    write(xml.append("</configuration>\n").toString());
  }

  private String queues() {
    h.heartbeat("n1:1");
    JsonNode q = policy.last().get("queues");
    return q == null ? null : q.toString();
  }

  private void refreshFails(String why) throws Exception {
    queues();  // the tree as Python has it
    try {
      h.cs.reinitialize(h.ctx.getYarnConfiguration(), h.ctx);
      fail("refreshed: " + why);
    } catch (IOException e) {
      assertEquals(why, "Failed to re-init queues", e.getMessage());
    }
    assertEquals(why, 1, h.cs.getRootQueue().getChildQueues().size());
    assertEquals(why, "root.default", h.cs.getQueue("default").getQueuePath());
    policy.requests.clear();
    h.heartbeat("n1:1");
    assertEquals(why + ": no new tree goes to Python", null, policy.last().get("queues"));
  }

  @Test
  public void aGoodRefreshReachesPythonAsFullStateWithTheNewTree() throws Exception {
    queues();
    writeTree("root.queues", "default,b", "root.default.capacity", "60", "root.b.capacity", "40",
        "root.b.state", "STOPPED");
    h.cs.reinitialize(h.ctx.getYarnConfiguration(), h.ctx);
    h.heartbeat("n1:1");
    JsonNode req = policy.last();
    assertEquals(true, req.get("full").getBooleanValue());
    assertEquals("[[\"root\",\"root\",\"\",0,1,1.0,1.0,1.0,1.0,100,1.0,16384,16],"
        + "[\"b\",\"root.b\",\"root\",1,0,0.4,1.0,0.4,1.0,100,1.0,16384,16],"
        + "[\"default\",\"root.default\",\"root\",1,1,0.6,1.0,0.6,1.0,100,1.0,16384,16]]", req.get("queues").toString());
  }

  @Test
  public void aRefreshRaisingTheMaximumAllocationRaisesTheShimsToo() throws Exception {
    assertEquals(8192, h.cs.getMaximumResourceCapability().getMemory());
    write("<configuration>\n"
        + "  <property><name>yarn.scheduler.capacity.root.queues</name><value>default</value></property>\n"
        + "  <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>100</value></property>\n"
        + "  <property><name>yarn.scheduler.maximum-allocation-mb</name><value>16384</value></property>\n"
        + "</configuration>\n");
    h.cs.reinitialize(h.ctx.getYarnConfiguration(), h.ctx);
    // a node that large makes it the cap whether or not the RM is still in its scheduling wait (before the
    // fix the shim kept the maximum it read at start: 8192)
    h.addNode("n3", 1, "/r1", 16384, 8);
    assertEquals(16384, h.cs.getMaximumResourceCapability().getMemory());
  }

  @Test
  public void capacitiesThatDoNotAddUpKeepTheOldTree() throws Exception {
    writeTree("root.queues", "default,b", "root.default.capacity", "60", "root.b.capacity", "30");
    refreshFails("60 + 30");
  }

  @Test
  public void aRemovedQueueKeepsTheOldTree() throws Exception {
    writeTree("root.queues", "b", "root.b.capacity", "100");
    refreshFails("default removed");
  }

  @Test
  public void malformedXmlKeepsTheOldTreeAndALaterGoodRefreshWorks() throws Exception {
    write("<configuration><property><name>yarn.scheduler.capacity.root.queues</name>");
    refreshFails("malformed");
    writeTree("root.queues", "default,b", "root.default.capacity", "60", "root.b.capacity", "40");
    h.cs.reinitialize(h.ctx.getYarnConfiguration(), h.ctx);
    assertEquals(2, h.cs.getRootQueue().getChildQueues().size());
  }

  @Test
  public void movingAnAppTakesThePythonPlacedUsageAlongAndTellsPython() throws Exception {
    writeTree("root.queues", "default,b", "root.default.capacity", "60", "root.b.capacity", "40",
        "maximum-am-resource-percent", "1.0");
    h.cs.reinitialize(h.ctx.getYarnConfiguration(), h.ctx);
    ApplicationAttemptId app = h.addApp("default", 1700000000000L, 1, "alice", "MAPREDUCE", "mover", 1L, null);
    h.ask(app, 20, 1024, 1, 3, true);
    h.heartbeat("n1:1");
    for (int i = 0; i < 3; i++) {
      h.allocate(app, "n2:1", 20, NodeType.OFF_SWITCH);
    }
    assertEquals("<memory:3072, vCores:3>", h.cs.getQueue("default").getUsedResources().toString());
    h.cs.moveApplication(app.getApplicationId(), "b");
    assertEquals("<memory:0, vCores:0>", h.cs.getQueue("default").getUsedResources().toString());
    assertEquals("<memory:3072, vCores:3>", h.cs.getQueue("b").getUsedResources().toString());
    assertEquals(3, h.cs.getQueue("b").getMetrics().getAllocatedContainers());
    h.heartbeat("n1:1");
    JsonNode row = policy.last().get("apps").get(0);
    assertEquals("application_1700000000000_0001", row.get(0).getTextValue());
    assertEquals("b", row.get(1).getTextValue());
  }
}
