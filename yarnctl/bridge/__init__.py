"""The py4j bridge: the wire codec, the RM-state mirror, the policy service and its server."""
