package io.yarnctl.shim;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.JsonParser;
import org.codehaus.jackson.map.ObjectMapper;

/** A parsed, shape-checked wire response; anything malformed is refused as a whole. */
final class WireResponse {

  /** Why a whole response was refused (the heartbeat is then decided natively). */
  static final class Refused extends Exception {
    final boolean resync;

    Refused(String why, boolean resync) {
      super(why);
      this.resync = resync;
    }
  }

  /** {@code [app, priority, containers]}. */
  static final class Assign {
    final String app;
    final long priority;
    final long count;
    /** Whether the containers hold idle resources lent opportunistically (wire v2's optional 4th item). */
    final boolean opportunistic;

    Assign(String app, long priority, long count) {
      this(app, priority, count, false);
    }

    Assign(String app, long priority, long count, boolean opportunistic) {
      this.app = app;
      this.priority = priority;
      this.count = count;
      this.opportunistic = opportunistic;
    }
  }

  /** {@code [container, reason]}. */
  static final class Kill {
    final String container;
    final String reason;

    Kill(String container, String reason) {
      this.container = container;
      this.reason = reason;
    }
  }

  /** {@code [node, MB, vcores]}. */
  static final class Resize {
    final String node;
    final long memory;
    final long vcores;

    Resize(String node, long memory, long vcores) {
      this.node = node;
      this.memory = memory;
      this.vcores = vcores;
    }
  }

  private static final ObjectMapper MAPPER = new ObjectMapper();

  final List<Assign> assigns = new ArrayList<Assign>();
  final List<Kill> kills = new ArrayList<Kill>();
  final List<Resize> resizes = new ArrayList<Resize>();

  private WireResponse() {
  }

  /** Parses {@code raw}, the answer to call {@code seq}; throws Refused per schema/README.md. */
  static WireResponse parse(String raw, long seq) throws Refused {
    if (raw == null || raw.trim().isEmpty()) {
      throw new Refused("empty response", false);
    }
    JsonNode root;
    try {
      JsonParser p = MAPPER.getJsonFactory().createJsonParser(raw);
      root = MAPPER.readTree(p);
      if (p.nextToken() != null) {
        throw new Refused("trailing data after the JSON value", false);
      }
    } catch (IOException e) {
      throw new Refused("not JSON: " + e.getMessage().split("\n")[0], false);
    }
    if (root == null || !root.isObject()) {
      throw new Refused("not a JSON object", false);
    }
    JsonNode s = root.get("seq");
    if (s == null || !s.isIntegralNumber()) {
      throw new Refused("seq missing or not an integer", false);
    }
    if (!s.isIntegralNumber() || s.getBigIntegerValue().compareTo(BigInteger.valueOf(seq)) != 0) {
      throw new Refused("seq " + s + " is not the request's " + seq, false);
    }
    WireResponse r = new WireResponse();
    for (Iterator<String> it = root.getFieldNames(); it.hasNext();) {
      String key = it.next();
      JsonNode v = root.get(key);
      if (key.equals("seq")) {
        continue;
      } else if (key.equals("err")) {
        if (!v.isTextual()) {
          throw new Refused("err is not a string", false);
        }
        throw new Refused("policy error: " + v.getTextValue(), false);
      } else if (key.equals("resync")) {
        if (!v.isBoolean()) {
          throw new Refused("resync is not a boolean", false);
        }
        if (v.getBooleanValue()) {
          throw new Refused("policy asked for a resync", true);
        }
      } else if (key.equals("a")) {
        for (JsonNode row : rows(v, key)) {
          r.assigns.add(new Assign(str(row, 0, key), integer(row, 1, key), integer(row, 2, key),
              row.size() > 3 && flag(row, 3, key)));
        }
      } else if (key.equals("k")) {
        for (JsonNode row : rows(v, key)) {
          r.kills.add(new Kill(str(row, 0, key), str(row, 1, key)));
        }
      } else if (key.equals("r")) {
        for (JsonNode row : rows(v, key)) {
          r.resizes.add(new Resize(str(row, 0, key), integer(row, 1, key), integer(row, 2, key)));
        }
      } else {
        throw new Refused("unknown key '" + key + "'", false);
      }
    }
    return r;
  }

  private static List<JsonNode> rows(JsonNode v, String key) throws Refused {
    if (!v.isArray()) {
      throw new Refused(key + " is not an array", false);
    }
    List<JsonNode> out = new ArrayList<JsonNode>(v.size());
    int width = key.equals("k") ? 2 : 3;
    int widest = key.equals("a") ? 4 : width;  // an assignment may add its kind
    for (JsonNode row : v) {
      if (!row.isArray() || row.size() < width || row.size() > widest) {
        throw new Refused(key + " row " + row + " is not an array of " + width
            + (widest > width ? " or " + widest : ""), false);
      }
      out.add(row);
    }
    return out;
  }

  private static String str(JsonNode row, int i, String key) throws Refused {
    JsonNode v = row.get(i);
    if (!v.isTextual()) {
      throw new Refused(key + " row " + row + ": item " + i + " is not a string", false);
    }
    return v.getTextValue();
  }

  private static boolean flag(JsonNode row, int i, String key) throws Refused {
    JsonNode v = row.get(i);
    if (!v.isIntegralNumber() || (v.getIntValue() != 0 && v.getIntValue() != 1) || v.getBigIntegerValue().bitLength() > 1) {
      throw new Refused(key + " row " + row + ": item " + i + " is not 0 or 1", false);
    }
    return v.getIntValue() == 1;
  }

  // Counts and sizes are validated per row later, so they are kept as long; values beyond long
  // saturate (they can never be valid) instead of wrapping.
  private static long integer(JsonNode row, int i, String key) throws Refused {
    JsonNode v = row.get(i);
    if (!v.isIntegralNumber()) {
      throw new Refused(key + " row " + row + ": item " + i + " is not an integer", false);
    }
    BigInteger b = v.getBigIntegerValue();
    if (b.bitLength() > 63) {
      return b.signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
    return b.longValue();
  }
}
