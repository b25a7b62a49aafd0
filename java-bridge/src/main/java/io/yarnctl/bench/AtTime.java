package io.yarnctl.bench;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * Runs a MapReduce client whose job reaches the ResourceManager at a wall-clock instant:
 * {@code AtTime <epoch ms> <main class> [args...]}, the args including
 * {@code -Dmapreduce.framework.name=yarnctl-at}.
 *
 * <p>`yarnctl bench mr` starts each job's client ahead of its slot. The main runs at once, so the
 * JVM start, the class loading and Hadoop's job set-up (several seconds on a busy 2-core machine) are
 * done by the slot; {@link TimedYarnRunner} holds only the submission itself until then. The main
 * runs on this thread and keeps its exit status ({@code System.exit} in the examples).
 */
public final class AtTime {
  /** The system property that carries the slot, in epoch milliseconds, to {@link TimedSubmitProvider}. */
  public static final String SUBMIT_AT = "yarnctl.bench.submit.at";

  private AtTime() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 2) {
      System.err.println("usage: AtTime <epoch ms> <main class> [args...]");
      System.exit(2);
    }
    System.setProperty(SUBMIT_AT, Long.toString(Long.parseLong(args[0])));
    Method main = Class.forName(args[1]).getMethod("main", String[].class);
    System.err.println("yarnctl-bench: main at " + System.currentTimeMillis() + " ms, slot " + args[0]);
    try {
      main.invoke(null, (Object) Arrays.copyOfRange(args, 2, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
