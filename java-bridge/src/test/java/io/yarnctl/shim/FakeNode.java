package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.net.Node;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatResponse;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;

/** An RMNode with a settable rack and a queue of container updates for the next heartbeat. */
public final class FakeNode implements RMNode {
  private final NodeId id;
  private final String rack;
  private final Resource total;
  private final List<ContainerStatus> launched = new ArrayList<ContainerStatus>();
  private final List<ContainerStatus> completed = new ArrayList<ContainerStatus>();

  FakeNode(String host, int port, String rack, int mb, int vcores) {
    this.id = NodeId.newInstance(host, port);
    this.rack = rack;
    this.total = Resource.newInstance(mb, vcores);
  }

  /** Queues a completion reported by the next heartbeat. */
  public synchronized void complete(ContainerStatus s) {
    completed.add(s);
  }

  @Override
  public synchronized List<UpdatedContainerInfo> pullContainerUpdates() {
    if (launched.isEmpty() && completed.isEmpty()) {
      return Collections.emptyList();
    }
    List<UpdatedContainerInfo> out = Collections.singletonList(new UpdatedContainerInfo(
        new ArrayList<ContainerStatus>(launched), new ArrayList<ContainerStatus>(completed)));
    launched.clear();
    completed.clear();
    return out;
  }

  @Override public NodeId getNodeID() { return id; }
  @Override public String getHostName() { return id.getHost(); }
  @Override public int getCommandPort() { return id.getPort(); }
  @Override public int getHttpPort() { return 8042; }
  @Override public String getNodeAddress() { return id.toString(); }
  @Override public String getHttpAddress() { return id.getHost() + ":8042"; }
  @Override public Resource getTotalCapability() { return total; }
  @Override public String getRackName() { return rack; }
  @Override public Node getNode() { return null; }
  @Override public NodeState getState() { return NodeState.RUNNING; }
  @Override public List<ContainerId> getContainersToCleanUp() { return null; }
  @Override public List<ApplicationId> getAppsToCleanup() { return null; }
  @Override public void updateNodeHeartbeatResponseForCleanup(NodeHeartbeatResponse response) { }
  @Override public NodeHeartbeatResponse getLastNodeHeartBeatResponse() { return null; }
  @Override public void resetLastNodeHeartBeatResponse() { }
  @Override public String getNodeManagerVersion() { return "2.7.7"; }
  @Override public String getHealthReport() { return "ok"; }
  @Override public long getLastHealthReportTime() { return 0; }
  @Override public Set<String> getNodeLabels() { return Collections.<String>emptySet(); }
}
