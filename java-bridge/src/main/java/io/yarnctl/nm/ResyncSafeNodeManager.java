package io.yarnctl.nm;

import java.io.IOException;
import java.lang.reflect.Method;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.GenericOptionsParser;
import org.apache.hadoop.util.StringUtils;
import org.apache.hadoop.yarn.YarnUncaughtExceptionHandler;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.NodeHealthCheckerService;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdater;

/**
 * Hadoop 2.7.7's NodeManager whose heartbeat thread survives an RM restart ({@link ResyncSafeStatusUpdater}).
 *
 * <p>The main class of the NodeManagers of {@code yarnctl cluster up}; everything else is stock.
 */
public final class ResyncSafeNodeManager extends NodeManager {

  private static final Log LOG = LogFactory.getLog(NodeManager.class);

  @Override
  protected NodeStatusUpdater createNodeStatusUpdater(Context context, Dispatcher dispatcher,
      NodeHealthCheckerService healthChecker) {
    return new ResyncSafeStatusUpdater(context, dispatcher, healthChecker, metrics);
  }

  /** NodeManager's private start-up, which main calls (it also lets a SHUTDOWN event exit the JVM). */
  static Method initAndStart() throws NoSuchMethodException {
    Method m = NodeManager.class.getDeclaredMethod("initAndStartNodeManager", Configuration.class, boolean.class);
    m.setAccessible(true);
    return m;
  }

  /** Starts the NodeManager as {@code NodeManager.main} does. */
  public static void main(String[] args) throws IOException {
    Thread.setDefaultUncaughtExceptionHandler(new YarnUncaughtExceptionHandler());
    StringUtils.startupShutdownMessage(NodeManager.class, args, LOG);
    NodeManager nodeManager = new ResyncSafeNodeManager();
    Configuration conf = new YarnConfiguration();
    new GenericOptionsParser(conf, args);
    try {
      initAndStart().invoke(nodeManager, conf, false);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.fatal("yarnctl: this Hadoop's NodeManager has no initAndStartNodeManager(Configuration, boolean);"
          + " run org.apache.hadoop.yarn.server.nodemanager.NodeManager instead", e);
      System.exit(-1);
    }
  }
}
