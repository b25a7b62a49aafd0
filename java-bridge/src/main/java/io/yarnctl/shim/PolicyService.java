package io.yarnctl.shim;

/**
 * The Python policy as seen from Java: one wire request in, one wire response out.
 *
 * <p>Python implements it through py4j ({@code class Java: implements = ["io.yarnctl.shim.PolicyService"]})
 * and registers the object as its callback server's {@code python_server_entry_point}.
 */
public interface PolicyService {

  /** Decides one node heartbeat: {@code request} and the return value are JSON (schema/wire.schema.json). */
  String decide(String request);
}
