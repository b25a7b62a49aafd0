package io.yarnctl.bench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.junit.After;
import org.junit.Test;

/** The framework yarnctl-at: chosen only by its name, needs AtTime's slot, leaves job.xml saying yarn. */
public class TimedSubmitProviderTest {
  @After
  public void clearSlot() {
    System.clearProperty(AtTime.SUBMIT_AT);
  }

  @Test
  public void otherFrameworksAreNotOurs() throws IOException {
    Configuration conf = new Configuration(false);
    conf.set("mapreduce.framework.name", "yarn");
    assertNull(new TimedSubmitProvider().create(conf));
    conf.set("mapreduce.framework.name", "local");
    assertNull(new TimedSubmitProvider().create(conf));
  }

  @Test
  public void withoutAtTimesSlotItSaysSo() {
    Configuration conf = new Configuration(false);
    conf.set("mapreduce.framework.name", TimedSubmitProvider.FRAMEWORK);
    try {
      new TimedSubmitProvider().create(conf);
      fail("expected an IOException naming the missing property");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(AtTime.SUBMIT_AT));
    }
  }

  @Test
  public void itIsYarnWithATimedSubmissionAndTheConfSaysYarn() throws IOException {
    System.setProperty(AtTime.SUBMIT_AT, "1795000000000");
    Configuration conf = new Configuration();
    conf.set("mapreduce.framework.name", TimedSubmitProvider.FRAMEWORK);
    TimedSubmitProvider provider = new TimedSubmitProvider();
    ClientProtocol client = provider.create(conf);
    try {
      assertTrue(client instanceof TimedYarnRunner);
      // written into job.xml after this call: the AM and the history server see the real framework
      assertEquals("yarn", conf.get("mapreduce.framework.name"));
    } finally {
      provider.close(client);
    }
  }
}
