package io.yarnctl.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider;

/**
 * The MapReduce framework {@code yarnctl-at}: YARN, with the job's submission held until its slot.
 *
 * <p>Selected by {@code -Dmapreduce.framework.name=yarnctl-at} in a client started by {@link AtTime},
 * whose slot it reads from the {@value AtTime#SUBMIT_AT} system property.
 */
public final class TimedSubmitProvider extends ClientProtocolProvider {
  public static final String FRAMEWORK = "yarnctl-at";

  @Override
  public ClientProtocol create(Configuration conf) throws IOException {
    if (!FRAMEWORK.equals(conf.get(MRConfig.FRAMEWORK_NAME))) {
      return null;
    }
    String at = System.getProperty(AtTime.SUBMIT_AT);
    if (at == null) {
      throw new IOException("mapreduce.framework.name=" + FRAMEWORK + " needs a client started by "
          + AtTime.class.getName() + " (system property " + AtTime.SUBMIT_AT + " is not set)");
    }
    // the job.xml the AM and the history server read is written from this conf after this call:
    // it names the framework the job really runs on
    conf.set(MRConfig.FRAMEWORK_NAME, MRConfig.YARN_FRAMEWORK_NAME);
    return new TimedYarnRunner(conf, Long.parseLong(at));
  }

  @Override
  public ClientProtocol create(InetSocketAddress addr, Configuration conf) throws IOException {
    return create(conf);
  }

  @Override
  public void close(ClientProtocol protocol) throws IOException {
    if (protocol instanceof TimedYarnRunner) {
      ((TimedYarnRunner) protocol).close();
    }
  }
}
