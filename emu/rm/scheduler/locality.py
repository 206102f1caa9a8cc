"""Locality levels and the resource name that matches any node (Hadoop's
NodeType and ResourceRequest.ANY)."""

NODE_LOCAL, RACK_LOCAL, OFF_SWITCH = "NODE_LOCAL", "RACK_LOCAL", "OFF_SWITCH"
ANY = "*"
