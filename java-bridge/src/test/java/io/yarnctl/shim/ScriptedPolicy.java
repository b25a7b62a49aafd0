package io.yarnctl.shim;

import java.util.ArrayList;
import java.util.List;

import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;

/** In-JVM PolicyService fake: records requests and answers with a script (default: empty decision). */
class ScriptedPolicy implements PolicyService {

  /** How the next call answers. */
  interface Answer {
    String answer(JsonNode request) throws Exception;
  }

  static final ObjectMapper MAPPER = new ObjectMapper();
  static final Answer ECHO = new Answer() {
    @Override
    public String answer(JsonNode request) {
      return "{\"seq\":" + request.get("seq").getLongValue() + "}";
    }
  };

  final List<JsonNode> requests = new ArrayList<JsonNode>();
  volatile Answer next = ECHO;

  @Override
  public synchronized String decide(String request) {
    try {
      JsonNode req = MAPPER.readTree(request);
      requests.add(req);
      return next.answer(req);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  JsonNode last() {
    return requests.get(requests.size() - 1);
  }

  static Answer constant(final String raw) {
    return new Answer() {
      @Override
      public String answer(JsonNode request) {
        return raw;
      }
    };
  }
}
