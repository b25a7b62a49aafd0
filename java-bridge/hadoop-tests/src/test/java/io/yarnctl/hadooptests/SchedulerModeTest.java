package io.yarnctl.hadooptests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertNull;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URL;
import java.util.Collections;
import java.util.List;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.Test;

/**
 * Checks that the mode under test is the one asked for: yarn-site.xml names the expected scheduler,
 * an RM left at its default configuration instantiates exactly that class, and the Hadoop test classes
 * are the extracted (in shim mode: rewritten) copies; in shim mode without a token file, the shim's own
 * JMX counters show that heartbeats went through it and were decided by its native FIFO. Runs first.
 */
public class SchedulerModeTest {

  private static final String FIFO = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler";
  private static final String SHIM = "io.yarnctl.shim.YarnctlScheduler";

  private static String mode() {
    String m = System.getProperty("yarnctl.hadooptests.scheduler");
    assertNotNull("run through the pom (-Dscheduler=stock|shim)", m);
    assertTrue("scheduler must be stock or shim, got " + m, m.equals("stock") || m.equals("shim"));
    return m;
  }

  private static final String CS = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler";
  private static final String SHIM_CS = "io.yarnctl.shim.YarnctlCapacityScheduler";

  private static boolean capacitySuite() {
    return "capacity".equals(System.getProperty("yarnctl.hadooptests.suite", "fifo"));
  }

  private static String expected() {
    if (capacitySuite()) {
      return mode().equals("shim") ? SHIM_CS : CS;
    }
    return mode().equals("shim") ? SHIM : FIFO;
  }

  @Test
  public void yarnSiteXmlNamesTheScheduler() {
    // YarnConfiguration adds yarn-default.xml then yarn-site.xml as default resources
    assertEquals(expected(), new YarnConfiguration().get(YarnConfiguration.RM_SCHEDULER));
    URL site = getClass().getClassLoader().getResource("yarn-site.xml");
    assertNotNull(site);
    assertTrue("yarn-site.xml from " + site, site.getPath().contains("/target/test-classes/"));
  }

  @Test(timeout = 60000)
  public void defaultRmRunsTheScheduler() throws Exception {
    MockRM rm = new MockRM();
    try {
      rm.start();
      assertEquals(expected(), rm.getResourceScheduler().getClass().getName());
      // one AM container through a node heartbeat
      MockNM nm = rm.registerNode("127.0.0.1:1234", 8192);
      RMApp app = rm.submitApp(1024);
      nm.nodeHeartbeat(true);
      RMAppAttempt attempt = app.getCurrentAppAttempt();
      rm.waitForState(attempt.getAppAttemptId(), RMAppAttemptState.ALLOCATED);
      if (mode().equals("shim")) {
        // the shim's JMX counters: with no token every heartbeat is decided natively (FallbackDisabled)
        MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
        ObjectName shim = new ObjectName("Hadoop:service=ResourceManager,name=YarnctlShim");
        long heartbeats = (Long) mbs.getAttribute(shim, "Heartbeats");
        long delegated = (Long) mbs.getAttribute(shim, "Delegated");
        long disabled = (Long) mbs.getAttribute(shim, "FallbackDisabled");
        long nativeContainers = (Long) mbs.getAttribute(shim, "ContainersNative");
        System.out.println("yarnctl shim counters: heartbeats=" + heartbeats + " delegated=" + delegated
            + " fallbackDisabled=" + disabled + " containersNative=" + nativeContainers);
        assertTrue("heartbeats " + heartbeats, heartbeats >= 1);
        if (new File(System.getProperty("yarnctl.hadooptests.token", "/nonexistent")).isFile()) {
          return; // Python may decide
        }
        assertEquals(0, delegated);
        assertEquals(heartbeats, disabled);
        assertEquals(1, nativeContainers);
      }
    } finally {
      rm.stop();
    }
  }

  @Test
  public void hadoopTestClassesAreTheExtractedCopies() throws Exception {
    for (String c : new String[] {"org.apache.hadoop.yarn.server.resourcemanager.MockRM",
        "org.apache.hadoop.yarn.server.resourcemanager.TestFifoScheduler",
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.TestCapacityScheduler"}) {
      URL where = Class.forName(c).getProtectionDomain().getCodeSource().getLocation();
      assertTrue(c + " loaded from " + where, where.getPath().endsWith("/target/test-classes/"));
    }
    if (capacitySuite()) {
      // TestCapacityScheduler.checkQueueCapacities(CapacityScheduler, ...): its parameter is rewritten in shim mode only
      Class<?> t = Class.forName("org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.TestCapacityScheduler");
      Class<?> param = null;
      for (java.lang.reflect.Method m : t.getDeclaredMethods()) {
        if (m.getName().equals("checkQueueCapacities")) {
          param = m.getParameterTypes()[0];
        }
      }
      assertNotNull(param);
      assertEquals(expected(), param.getName());
      return;
    }
    // an anonymous FifoScheduler subclass in Hadoop's tests: its super class is rewritten in shim mode only
    Class<?> anon = Class.forName(
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.TestFifoScheduler$1");
    assertEquals(expected(), anon.getSuperclass().getName());
    try {
      Class.forName(SHIM);
      assertEquals("the shim is on the class path", "shim", mode());
    } catch (ClassNotFoundException e) {
      assertEquals("the shim is not on the class path", "stock", mode());
    }
  }

  @Test
  public void originalTestsJarIsNotOnTheClassPath() throws Exception {
    List<URL> all = Collections.list(getClass().getClassLoader().getResources(
        "org/apache/hadoop/yarn/server/resourcemanager/MockRM.class"));
    assertEquals("MockRM.class on the class path: " + all, 1, all.size());
    assertNull("RemapTestsJar's ASM is not on the test class path",
        getClass().getClassLoader().getResource("org/objectweb/asm/commons/ClassRemapper.class"));
  }
}
