package io.yarnctl.shim;

import java.io.Closeable;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import javax.net.SocketFactory;

import org.apache.commons.logging.Log;

import py4j.CallbackClient;
import py4j.Gateway;

/**
 * py4j client to the Python policy server: a callback client only, no GatewayServer listens in the RM.
 *
 * <p>Every call is bounded by the socket read timeout (the deadline); new connections by the connect
 * timeout. A connection that timed out is reset by py4j and a fresh one is opened on the next call,
 * which is also how the client reconnects after Python restarts.
 */
final class PolicyClient implements PolicyService, Closeable {

  /** How a call failed, for the fallback counters. */
  enum Failure { TIMEOUT, UNREACHABLE, ERROR }

  /** A failed call with its classification. */
  static final class CallException extends RuntimeException {
    final Failure failure;

    CallException(Failure failure, Throwable cause) {
      super(failure + ": " + rootMessage(cause), cause);
      this.failure = failure;
    }
  }

  // py4j logs every timeout with a stack trace through java.util.logging; the shim counts and
  // logs failures itself. Held statically because JUL keeps loggers only weakly.
  private static final Logger PY4J_LOG = Logger.getLogger("py4j");

  static {
    PY4J_LOG.setLevel(Level.OFF);
  }

  // py4j fixes the read timeout per connection, so full-state calls get their own client and pool.
  private final CallbackClient deltaClient;
  private final CallbackClient fullClient;
  private final PolicyService deltaProxy;
  private final PolicyService fullProxy;

  /** Creates the client; nothing connects until the first call. */
  PolicyClient(String address, int port, String token, int connectTimeoutMs, int deadlineMs)
      throws IOException {
    this(address, port, token, connectTimeoutMs, deadlineMs, deadlineMs);
  }

  /** Creates the client with a separate (longer) deadline for full-state calls. */
  PolicyClient(String address, int port, String token, int connectTimeoutMs, int deadlineMs, int fullDeadlineMs)
      throws IOException {
    InetAddress addr = InetAddress.getByName(address);
    SocketFactory sf = new ConnectTimeoutSocketFactory(connectTimeoutMs);
    // minConnectionTime 0: no cleaner thread; idle connections stay open for the next heartbeat.
    deltaClient = new CallbackClient(port, addr, token, 0, TimeUnit.SECONDS, sf, false, deadlineMs);
    fullClient = new CallbackClient(port, addr, token, 0, TimeUnit.SECONDS, sf, false, fullDeadlineMs);
    deltaProxy = proxy(deltaClient);
    fullProxy = proxy(fullClient);
  }

  /** Connects as {@code c} says, logging to {@code log}; null when delegation is off or cannot be set up. */
  static PolicyService connect(ShimConfig c, Log log) {
    if (!c.enabled) {
      log.info("yarnctl shim: " + ShimConfig.ENABLED + "=false; every heartbeat is decided natively (FIFO)");
      return null;
    }
    String token;
    try {
      token = c.readToken();
    } catch (Exception e) {
      log.error("yarnctl shim: cannot read the bridge token from " + c.tokenFile + " (" + e
          + "); delegation is off and every heartbeat is decided natively (FIFO)");
      return null;
    }
    try {
      PolicyClient pc = new PolicyClient(c.address, c.port, token, c.connectTimeoutMs, c.deadlineMs,
          c.fullDeadlineMs);
      log.info("yarnctl shim: delegating node heartbeats to " + c.address + ":" + c.port + " with a "
          + c.deadlineMs + " ms deadline (" + c.fullDeadlineMs + " ms for full state)");
      return pc;
    } catch (Exception e) {
      log.error("yarnctl shim: cannot set up the py4j client for " + c.address + ":" + c.port + " (" + e
          + "); delegation is off and every heartbeat is decided natively (FIFO)");
      return null;
    }
  }

  private static PolicyService proxy(CallbackClient client) {
    return (PolicyService) client.getPythonServerEntryPoint(new Gateway(null, client),
        new Class[] {PolicyService.class});
  }

  /** Calls Python with the delta deadline; throws CallException classified as TIMEOUT, UNREACHABLE or ERROR. */
  @Override
  public String decide(String request) {
    return call(deltaProxy, request);
  }

  /** Calls Python with the full-state deadline. */
  String decideFull(String request) {
    return call(fullProxy, request);
  }

  private static String call(PolicyService p, String request) {
    try {
      return p.decide(request);
    } catch (RuntimeException e) {
      throw new CallException(classify(e), e);
    }
  }

  /** Closes pooled connections. */
  @Override
  public void close() {
    deltaClient.shutdown();
    fullClient.shutdown();
  }

  /** Walks the cause chain: connect failures are UNREACHABLE, read timeouts TIMEOUT, the rest ERROR. */
  static Failure classify(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConnectException) {
        return Failure.UNREACHABLE;
      }
      if (c instanceof SocketTimeoutException) {
        return Failure.TIMEOUT;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return Failure.ERROR;
  }

  static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : " " + c.getMessage());
  }

  /** Socket factory whose two-argument createSocket (the one py4j uses) connects with a timeout. */
  static final class ConnectTimeoutSocketFactory extends SocketFactory {
    private final int connectTimeoutMs;

    ConnectTimeoutSocketFactory(int connectTimeoutMs) {
      this.connectTimeoutMs = connectTimeoutMs;
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
      Socket s = new Socket();
      try {
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), connectTimeoutMs);
      } catch (SocketTimeoutException e) {
        s.close();
        // A connect timeout means "unreachable", not a slow policy.
        ConnectException ce = new ConnectException("connect timed out after " + connectTimeoutMs + " ms");
        ce.initCause(e);
        throw ce;
      } catch (IOException e) {
        s.close();
        throw e;
      }
      return s;
    }

    @Override
    public Socket createSocket() {
      return new Socket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
      return createSocket(InetAddress.getByName(host), port);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
      throw new IOException("not used by py4j");
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
        throws IOException {
      throw new IOException("not used by py4j");
    }
  }
}
