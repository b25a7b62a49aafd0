package io.yarnctl.shim;

import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.ahs.RMApplicationHistoryWriter;
import org.apache.hadoop.yarn.server.resourcemanager.metrics.SystemMetricsPublisher;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.ContainerAllocationExpirer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.NullRMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.LocalConfigurationProvider;
import org.apache.hadoop.yarn.server.resourcemanager.security.NMTokenSecretManagerInRM;
import org.apache.hadoop.yarn.server.resourcemanager.security.RMContainerTokenSecretManager;

/** A real shim host (or stock scheduler) on an RMContextImpl with an event-recording dispatcher, as TestFifoScheduler builds one. */
public final class ShimHarness {

  /** Dispatcher that records events instead of running RMApp/RMNode state machines. */
  static final class RecordingDispatcher implements Dispatcher {
    final List<Event> events = Collections.synchronizedList(new ArrayList<Event>());
    private final EventHandler handler = new EventHandler() {
      @Override
      public void handle(Event event) {
        events.add(event);
      }
    };

    @Override
    public EventHandler getEventHandler() {
      return handler;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void register(Class<? extends Enum> eventType, EventHandler h) {
    }
  }

  /** Settable clock. */
  static final class TestClock extends ShimCore.Clock {
    volatile long now = 1700000002000L;

    @Override
    long now() {
      return now;
    }
  }

  /** The FIFO host, or null. */
  final YarnctlScheduler scheduler;
  /** The CapacityScheduler host, or null. */
  final YarnctlCapacityScheduler cs;
  /** The shim host under test, or null for a stock scheduler. */
  final ShimHost host;
  /** The scheduler under test as the RM sees it (a stock one in the benchmark's native mode and in differential tests). */
  public final AbstractYarnScheduler<FiCaSchedulerApp, FiCaSchedulerNode> rm;
  final RMContextImpl ctx;
  final RecordingDispatcher dispatcher = new RecordingDispatcher();
  final TestClock clock = new TestClock();
  public final Map<String, FakeNode> nodes = new TreeMap<String, FakeNode>();

  /** Starts {@code s} (a shim host, or a stock FifoScheduler or CapacityScheduler) on a fresh RMContext. */
  public ShimHarness(Configuration conf, AbstractYarnScheduler<FiCaSchedulerApp, FiCaSchedulerNode> s) throws Exception {
    this.rm = s;
    this.scheduler = s instanceof YarnctlScheduler ? (YarnctlScheduler) s : null;
    this.cs = s instanceof YarnctlCapacityScheduler ? (YarnctlCapacityScheduler) s : null;
    this.host = s instanceof ShimHost ? (ShimHost) s : null;
    RMContainerTokenSecretManager cts = new RMContainerTokenSecretManager(conf);
    cts.rollMasterKey();
    NMTokenSecretManagerInRM nts = new NMTokenSecretManagerInRM(conf);
    nts.rollMasterKey();
    ctx = new RMContextImpl(dispatcher, mock(ContainerAllocationExpirer.class), null, null, null, null, cts, nts, null, s);
    ctx.setSystemMetricsPublisher(mock(SystemMetricsPublisher.class));
    ctx.setRMApplicationHistoryWriter(mock(RMApplicationHistoryWriter.class));
    ctx.setYarnConfiguration(new YarnConfiguration());
    // what CapacityScheduler reads at init: its capacity-scheduler.xml (properties set in conf win) and labels
    ctx.setConfigurationProvider(new LocalConfigurationProvider());
    NullRMNodeLabelsManager labels = new NullRMNodeLabelsManager();
    labels.init(new Configuration(conf));  // it switches labels on in the conf it is given
    ctx.setNodeLabelManager(labels);
    if (s instanceof Configurable) {
      ((Configurable) s).setConf(conf);  // as the RM's ReflectionUtils.newInstance does
    }
    s.setRMContext(ctx);
    if (scheduler != null) {
      scheduler.setClock(clock);
    }
    if (cs != null) {
      cs.setClock(clock);
    }
    s.init(conf);
    s.start();
  }

  /** A harness whose scheduler delegates to {@code policy} (null: delegation off). */
  static ShimHarness start(PolicyService policy, Configuration conf) throws Exception {
    ShimHarness h = new ShimHarness(conf, new YarnctlScheduler());
    h.scheduler.setPolicy(policy);
    return h;
  }

  /** A harness whose CapacityScheduler host delegates to {@code policy} (null: delegation off). */
  static ShimHarness startCapacity(PolicyService policy, Configuration conf) throws Exception {
    ShimHarness h = new ShimHarness(conf, new YarnctlCapacityScheduler());
    h.cs.setPolicy(policy);
    return h;
  }

  /** Default test configuration: no token file, so nothing connects unless a policy is injected. */
  public static Configuration conf() {
    Configuration conf = new YarnConfiguration();
    conf.set(ShimConfig.TOKEN_FILE, "/nonexistent/yarnctl-test.token");
    return conf;
  }

  public void stop() {
    rm.stop();
  }

  public FakeNode addNode(String host, int port, String rack, int mb, int vcores) {
    FakeNode n = new FakeNode(host, port, rack, mb, vcores);
    rm.handle(new NodeAddedSchedulerEvent(n));
    nodes.put(n.getNodeID().toString(), n);
    return n;
  }

  /** Adds an accepted app with one attempt and a mocked RMApp carrying the wire's app fields. */
  public ApplicationAttemptId addApp(long clusterTs, int id, String user, String type, String name, long submit,
      String... tags) {
    return addApp(clusterTs, id, user, type, name, submit, null, tags);
  }

  /** As above, with the AM request the RM made for it (the attempt's AM resource), null for none. */
  public ApplicationAttemptId addApp(long clusterTs, int id, String user, String type, String name, long submit,
      Resource am, String... tags) {
    return addApp("default", clusterTs, id, user, type, name, submit, am, tags);
  }

  /** As above, submitted to {@code queue} (a leaf's short name, as in Hadoop 2.7). */
  public ApplicationAttemptId addApp(String queue, long clusterTs, int id, String user, String type, String name,
      long submit, Resource am, String... tags) {
    ApplicationId appId = ApplicationId.newInstance(clusterTs, id);
    ApplicationAttemptId attemptId = ApplicationAttemptId.newInstance(appId, 1);
    RMAppImpl app = mock(RMAppImpl.class);
    when(app.getApplicationId()).thenReturn(appId);
    when(app.getQueue()).thenReturn(queue);
    when(app.getUser()).thenReturn(user);
    when(app.getApplicationType()).thenReturn(type);
    when(app.getName()).thenReturn(name);
    when(app.getSubmitTime()).thenReturn(submit);
    when(app.getApplicationTags()).thenReturn(new HashSet<String>(Arrays.asList(tags)));
    if (am != null) {
      when(app.getAMResourceRequest()).thenReturn(
          ResourceRequest.newInstance(Priority.newInstance(0), ResourceRequest.ANY, am, 1));
    }
    RMAppAttemptImpl attempt = mock(RMAppAttemptImpl.class);
    when(attempt.getAppAttemptId()).thenReturn(attemptId);
    RMAppAttemptMetrics metrics = mock(RMAppAttemptMetrics.class);
    when(attempt.getRMAppAttemptMetrics()).thenReturn(metrics);
    when(app.getCurrentAppAttempt()).thenReturn(attempt);
    ctx.getRMApps().put(appId, app);
    rm.handle(new AppAddedSchedulerEvent(appId, queue, user));
    rm.handle(new AppAttemptAddedSchedulerEvent(attemptId, false));
    return attemptId;
  }

  /** The AM's allocate() call: ANY count/relax plus {@code name, count} local pairs (relax 1). */
  public void ask(ApplicationAttemptId a, int priority, int mb, int vcores, int any, boolean relax, Object... locals) {
    List<ResourceRequest> asks = new ArrayList<ResourceRequest>();
    Priority p = Priority.newInstance(priority);
    Resource cap = Resource.newInstance(mb, vcores);
    for (int i = 0; i < locals.length; i += 2) {
      asks.add(ResourceRequest.newInstance(p, (String) locals[i], cap, (Integer) locals[i + 1], true));
    }
    asks.add(ResourceRequest.newInstance(p, ResourceRequest.ANY, cap, any, relax));
    rm.allocate(a, asks, new ArrayList<ContainerId>(), null, null);
  }

  /** Allocates a guaranteed container through the scheduler's own path, as a decision would. */
  RMContainer allocate(ApplicationAttemptId a, String node, int priority, NodeType type) {
    return allocate(a, node, priority, type, false);
  }

  /** Allocates through the scheduler's own path, as a decision would, guaranteed or opportunistic. */
  RMContainer allocate(ApplicationAttemptId a, String node, int priority, NodeType type, boolean opportunistic) {
    synchronized (host) {
      FiCaSchedulerNode n = host.nodesView().get(nodes.get(node).getNodeID());
      FiCaSchedulerApp app = rm.getApplicationAttempt(a);
      Priority p = Priority.newInstance(priority);
      String name = type == NodeType.NODE_LOCAL ? n.getNodeName()
          : type == NodeType.RACK_LOCAL ? n.getRackName() : ResourceRequest.ANY;
      RMContainer c;
      synchronized (app) {
        c = host.allocations().allocateOnNode(n, app, p, app.getResourceRequest(p, name), type, opportunistic);
      }
      if (c != null) {
        host.accountContainer(c);
      }
      return c;
    }
  }

  public void heartbeat(String node) {
    rm.handle(new NodeUpdateSchedulerEvent(nodes.get(node)));
  }

  FiCaSchedulerNode schedulerNode(String node) {
    return host.nodesView().get(nodes.get(node).getNodeID());
  }
}
