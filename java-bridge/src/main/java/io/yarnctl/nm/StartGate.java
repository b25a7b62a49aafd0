package io.yarnctl.nm;

/**
 * Holds back a thread started inside {@link #run} until that section has returned, so a flag the
 * section sets after {@code Thread.start()} is seen by the thread's first read.
 */
final class StartGate {

  private final Object lock = new Object();

  /** Runs {@code section} with the gate closed. */
  void run(Runnable section) {
    synchronized (lock) {
      section.run();
    }
  }

  /** {@code body}, which first waits for any section in progress to return. */
  Runnable gated(Runnable body) {
    return () -> {
      synchronized (lock) {
        // nothing to do inside: taking the lock is the wait, releasing it publishes the section's writes
      }
      body.run();
    };
  }
}
