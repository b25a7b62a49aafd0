package io.yarnctl.nm;

import static org.junit.Assert.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

import org.junit.Test;

/** The private Hadoop 2.7.7 members the resync mend reaches by reflection are there, with the types it assumes. */
public class HadoopMembersTest {

  @Test
  public void theHeartbeatLoopIsARunnableField() throws NoSuchFieldException {
    Field f = ResyncSafeStatusUpdater.runnableField();
    assertEquals(Runnable.class, f.getType());
  }

  @Test
  public void nodeManagerStartsThroughInitAndStartNodeManager() throws NoSuchMethodException {
    Method m = ResyncSafeNodeManager.initAndStart();
    assertEquals(void.class, m.getReturnType());
  }
}
