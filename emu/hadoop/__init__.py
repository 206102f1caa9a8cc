"""Hadoop's own schedulers inside emu's RM (`--scheduler-impl hadoop`).

- `classpath`  which Hadoop jars: `--hadoop-classpath`, `HADOOP_HOME`, or the
  pinned release fetched by Maven (`pom.xml`); the Java driver compiled
  against them; the one cache of Maven classpaths (emu.fidelity's too).
- `bridge`     the JVM (JPype, started once per process) and the driver.
- `contract`   the driver's calls and answers, as Python Protocols and the
  records its answers decode into; mirrors `SchedulerBackend.java`.
- `java/`      `SchedulerDriver.java`, which stands in for the parts of
  YARN's RM the scheduler reads and answers each call with what the
  scheduler did, and `SchedulerBackend.java`, the interface it implements.

Nothing here is imported unless the backend is asked for: emu runs without
a JVM.
"""
