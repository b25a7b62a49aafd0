package io.yarnctl.bench;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Runs a client's main at a wall-clock instant: {@code AtTime <epoch ms> <main class> [args...]}.
 *
 * <p>`yarnctl bench mr` starts each job's client JVM ahead of its slot; the JVM, the main class and
 * the Hadoop client classes job submission needs are loaded while it waits, so the job reaches the
 * ResourceManager on its schedule rather than a JVM start-up (several seconds on a busy machine) late.
 * The main runs on this thread and keeps its exit status ({@code System.exit} in the examples).
 */
public final class AtTime {
  // loaded before the wait: what Job.submit would otherwise load after it
  private static final String[] WARM = {
    "org.apache.hadoop.conf.Configuration",
    "org.apache.hadoop.mapreduce.Job",
    "org.apache.hadoop.mapreduce.Cluster",
    "org.apache.hadoop.mapred.YARNRunner",
    "org.apache.hadoop.yarn.client.api.impl.YarnClientImpl",
    "org.apache.hadoop.fs.LocalFileSystem",
  };

  private AtTime() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 2) {
      System.err.println("usage: AtTime <epoch ms> <main class> [args...]");
      System.exit(2);
    }
    long at = Long.parseLong(args[0]);
    Method main = Class.forName(args[1]).getMethod("main", String[].class);
    for (String name : WARM) {
      try {
        Class.forName(name);
      } catch (ClassNotFoundException | LinkageError e) {
        // a class this Hadoop lacks: it simply loads later, as without the warm-up
      }
    }
    long wait = at - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    System.err.println("yarnctl-bench: main at " + System.currentTimeMillis() + " ms, planned " + at);
    try {
      main.invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
