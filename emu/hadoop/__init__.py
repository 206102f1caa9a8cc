"""Hadoop's own schedulers inside emu's RM (`--scheduler-impl hadoop`).

- `classpath`  which Hadoop jars: `--hadoop-classpath`, `HADOOP_HOME`, or the
  pinned release fetched by Maven (`pom.xml`); the Java driver compiled
  against them.
- `bridge`     the JVM (JPype, started once per process) and the driver.
- `java/`      `SchedulerDriver.java`: the one Java class emu ships. It stands
  in for the parts of YARN's RM the scheduler reads and answers each call
  with what the scheduler did.

Nothing here is imported unless the backend is asked for: emu runs without
a JVM.
"""
