"""Hadoop configuration: properties by Hadoop's own names, read from its XML files."""
