package io.yarnctl.shim;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import py4j.StringUtil;

/**
 * In-JVM stand-in for the Python side: speaks py4j's callback-server protocol (auth command, then
 * {@code c/t/decide/s<arg>/e} calls answered with {@code !ys<answer>}) so tests drive the real PolicyClient.
 */
final class FakePythonServer implements Closeable {
  final ServerSocket server;
  final String token;
  final PolicyService policy;
  volatile int delayMs;

  FakePythonServer(int port, String token, PolicyService policy) throws IOException {
    this.server = new ServerSocket();
    this.server.setReuseAddress(true);
    this.server.bind(new java.net.InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
    this.token = token;
    this.policy = policy;
    Thread t = new Thread(new Runnable() {
      @Override
      public void run() {
        acceptLoop();
      }
    }, "fake-python-accept");
    t.setDaemon(true);
    t.start();
  }

  int port() {
    return server.getLocalPort();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        final Socket s = server.accept();
        Thread t = new Thread(new Runnable() {
          @Override
          public void run() {
            serve(s);
          }
        }, "fake-python-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket s) {
    try {
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
      Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
      String cmd;
      while ((cmd = in.readLine()) != null) {
        if (cmd.equals("A")) {
          String got = in.readLine();
          in.readLine();
          if (!token.equals(got)) {
            out.write("!xn\n");
            out.flush();
            s.close();
            return;
          }
          out.write("!yv\n");
          out.flush();
        } else if (cmd.equals("c")) {
          String target = in.readLine();
          String method = in.readLine();
          String arg = in.readLine();
          in.readLine();
          if (!"t".equals(target) || !"decide".equals(method) || !arg.startsWith("s")) {
            out.write("!xsunexpected call\n");
          } else {
            if (delayMs > 0) {
              Thread.sleep(delayMs);
            }
            out.write("!ys" + StringUtil.escape(policy.decide(StringUtil.unescape(arg.substring(1)))) + "\n");
          }
          out.flush();
        }
      }
    } catch (Exception e) {
      // connection closed by the client (e.g. after a read timeout)
    } finally {
      try {
        s.close();
      } catch (IOException e) {
        // ignore
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }

  static int freePort() throws IOException {
    ServerSocket s = new ServerSocket(0);
    int p = s.getLocalPort();
    s.close();
    return p;
  }
}
