package io.yarnctl.shim.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.yarnctl.shim.FakeNode;
import io.yarnctl.shim.ShimConfig;
import io.yarnctl.shim.ShimHarness;
import io.yarnctl.shim.ShimMetrics;
import io.yarnctl.shim.YarnctlCapacityScheduler;
import io.yarnctl.shim.YarnctlScheduler;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;

/**
 * Per-heartbeat cost of {@code handle(NODE_UPDATE)}: native FifoScheduler vs YarnctlScheduler delegating to
 * a Python policy server, on 1,000 nodes (or as many as asked) and 200 apps in a steady state (a few containers
 * complete per heartbeat and their apps' asks are topped up). Prints one JSON object per mode.
 *
 * <p>Args: {@code [heartbeats=20000] [port=25334] [token-file=~/.yarnctl/bridge.token] [modes=native,shim]
 * [nodes=1000]}; a mode is {@code native} or {@code shim} (FIFO), {@code native-cs} or {@code shim-cs}
 * (CapacityScheduler, its default one queue).
 */
public final class HeartbeatBench {
  private static final int DEFAULT_NODES = 1000;
  private static final int APPS = 200;
  private static final int COMPLETE_PER_HEARTBEAT = 2;
  private static final int OUTSTANDING = 40;

  private HeartbeatBench() {
  }

  public static void main(String[] args) throws Exception {
    int heartbeats = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
    String port = args.length > 1 ? args[1] : String.valueOf(ShimConfig.DEFAULT_PORT);
    String tokenFile = args.length > 2 ? args[2] : null;
    String modes = args.length > 3 ? args[3] : "native,shim";
    int nodes = args.length > 4 ? Integer.parseInt(args[4]) : DEFAULT_NODES;
    for (String mode : modes.split(",")) {
      Configuration conf = new Configuration();
      conf.set(ShimConfig.PORT, port);
      if (tokenFile != null) {
        conf.set(ShimConfig.TOKEN_FILE, tokenFile);
      }
      System.out.println(run(mode, new ShimHarness(conf, scheduler(mode)), heartbeats, nodes));
    }
    System.exit(0);
  }

  /** The scheduler a mode names: stock FIFO or CapacityScheduler, or the shim on either. */
  private static AbstractYarnScheduler<FiCaSchedulerApp, FiCaSchedulerNode> scheduler(String mode) {
    switch (mode) {
    case "native":
      return new FifoScheduler();
    case "shim":
      return new YarnctlScheduler();
    case "native-cs":
      return new CapacityScheduler();
    case "shim-cs":
      return new YarnctlCapacityScheduler();
    default:
      throw new IllegalArgumentException("unknown mode " + mode + " (native, shim, native-cs, shim-cs)");
    }
  }

  private static String run(String mode, ShimHarness h, int heartbeats, int nodeCount) {
    List<FakeNode> nodes = new ArrayList<FakeNode>();
    for (int i = 0; i < nodeCount; i++) {
      // "localhost" with distinct ports: container tokens resolve the host, and fake names hit DNS timeouts.
      nodes.add(h.addNode("localhost", 20000 + i, "/rack" + (i % 20), 8192, 8));
    }
    List<ApplicationAttemptId> apps = new ArrayList<ApplicationAttemptId>();
    for (int i = 1; i <= APPS; i++) {
      ApplicationAttemptId a = h.addApp(1700000000000L, i, "user" + (i % 10), "MAPREDUCE", "bench-" + i,
          1700000000000L + i);
      h.ask(a, 20, 1024, 1, OUTSTANDING, true);
      apps.add(a);
    }
    int warmup = Math.min(heartbeats, 2 * nodeCount);
    drive(h, nodes, warmup, null);
    long[] us = new long[heartbeats];
    long t0 = System.nanoTime();
    long allocated = drive(h, nodes, heartbeats, us);
    double wall = (System.nanoTime() - t0) / 1e9;
    long handleUs = 0;
    for (long u : us) {
      handleUs += u;
    }
    Arrays.sort(us);
    long delegated = 0;
    long fallback = 0;
    if (mode.startsWith("shim")) {
      ShimMetrics m = metrics(h.rm);
      delegated = m.getDelegated();
      fallback = m.getFallback();
    }
    h.stop();
    return String.format("{\"mode\":\"%s\",\"nodes\":%d,\"heartbeats\":%d,\"p50_us\":%d,\"p99_us\":%d,"
        + "\"heartbeats_per_s\":%.0f,\"delegated\":%d,\"fallback\":%d,\"containers\":%d,\"wall_s\":%.2f}",
        mode, nodeCount, heartbeats, us[heartbeats / 2], us[(int) (heartbeats * 0.99)], heartbeats / (handleUs / 1e6),
        delegated, fallback, allocated, wall);
  }

  /** Round-robin heartbeats; each completes a few containers on its node and tops up their apps' asks. */
  private static long drive(ShimHarness h, List<FakeNode> nodes, int n, long[] us) {
    long allocated = 0;
    for (int i = 0; i < n; i++) {
      FakeNode node = nodes.get(i % nodes.size());
      SchedulerNode sn = h.rm.getSchedulerNode(node.getNodeID());
      List<RMContainer> running = sn.getRunningContainers();
      List<ApplicationAttemptId> topUp = new ArrayList<ApplicationAttemptId>();
      for (int k = 0; k < COMPLETE_PER_HEARTBEAT && k < running.size(); k++) {
        RMContainer c = running.get(k);
        node.complete(ContainerStatus.newInstance(c.getContainerId(), ContainerState.COMPLETE, "", 0));
        topUp.add(c.getApplicationAttemptId());
      }
      for (ApplicationAttemptId a : topUp) {
        h.ask(a, 20, 1024, 1, OUTSTANDING, true);
      }
      NodeUpdateSchedulerEvent ev = new NodeUpdateSchedulerEvent(node);
      long t0 = System.nanoTime();
      h.rm.handle(ev);
      if (us != null) {
        us[i] = (System.nanoTime() - t0) / 1000;
      }
      allocated += sn.getNumContainers() - (running.size() - topUp.size());
    }
    return allocated;
  }

  private static ShimMetrics metrics(Object host) {
    try {
      java.lang.reflect.Method m = host.getClass().getMethod("metrics");  // ShimHost is package-private
      m.setAccessible(true);
      return (ShimMetrics) m.invoke(host);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
