"""The JVM and the scheduler driver, through JPype.

JPype runs the JVM inside emu's process: a call from Python to a Java
method costs about a microsecond (a subprocess and a pipe would cost tens),
and the scheduler runs on emu's thread, so nothing in it runs on the wall
clock. One JVM per process, started at the first use with the classpath of
that use: a later run in the same process must ask for the same jars.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from emu.errors import InputError, SchedulerFailed
from emu.hadoop import classpath as hcp

if TYPE_CHECKING:
    from emu.hadoop.contract import SchedulerBackend

_started: hcp.Classpath | None = None


class HadoopSchedulerFailed(SchedulerFailed):
    """Hadoop's scheduler threw during a run: the run fails with its message."""

    def __init__(self, message: str, simulated_ms: int) -> None:
        super().__init__("Hadoop's scheduler", message, simulated_ms)


def java_message(exc: BaseException) -> str:
    """A Java exception's own words, innermost cause first ("class: message")."""
    try:
        throwable: Any = exc
        seen = 0
        while throwable.getCause() is not None and seen < 10:
            throwable = throwable.getCause()
            seen += 1
        return f"{throwable.getClass().getName()}: {throwable.getMessage()}"
    except Exception:
        return str(exc)


def start(explicit_classpath: str | None = None, version: str = hcp.HADOOP_VERSION) -> Any:
    """Start the JVM (once) and return the driver class."""
    global _started
    try:
        import jpype
    except ImportError as e:
        raise InputError(
            "--scheduler-impl hadoop",
            None,
            f"needs the Python package JPype1 ({e}): `make hadoop` installs it, or "
            "pip install JPype1",
        ) from None
    cp = hcp.resolve(explicit_classpath, version=version)
    if _started is None:
        if hcp.java_home_tool("java") is None:
            raise InputError(
                "--scheduler-impl hadoop",
                None,
                "needs a Java runtime (java on PATH or JAVA_HOME): install OpenJDK 17",
            )
        driver = hcp.driver_classes(cp)
        level = os.environ.get("EMU_HADOOP_LOG", "OFF").upper()
        import jpype.config

        jpype.config.destroy_jvm = False  # exit without waiting for Hadoop's timer threads
        try:
            jpype.startJVM(
                f"-Dlog4j.configuration={hcp.LOG4J.as_uri()}",
                f"-Demu.hadoop.log.level={level}",
                # One thread calls into the scheduler: a serial collector
                # leaves the other cores to emu. JPype runs a full Python
                # collection after every Java collection; a young generation
                # of 1 GB makes those rare (measured on the 1,000-node
                # benchmark, Fair: 3.9x with the default, 6.5x with this).
                "-XX:+UseSerialGC",
                "-Xmn1g",
                # SIGINT and SIGTERM stay Python's (emu.cli turns both into a
                # clean stop): without -Xrs the JVM takes them over and exits
                # at once, skipping emu's cleanup and exit codes.
                "-Xrs",
                # Every object's identity hash is 1 (HotSpot's hashCode=2):
                # a HashSet or HashMap keyed by objects without a hashCode of
                # their own iterates in the order of its insertions (one
                # bucket) instead of an order drawn by the JVM's per-thread
                # hash generator, whose state depends on everything hashed
                # before (earlier runs in this process, JPype's start-up).
                # Hadoop decides by such orders: the preemption policy hands
                # queues of equal need their shares in the order of a
                # HashSet<TempQueuePerPartition>
                # (PreemptableResourceCalculator.computeIdealResourceDistribution),
                # so two identical sibling leaves got different ideal
                # assignments from run to run. Insertion order is an order a
                # real JVM can draw too; only lookups in such maps get slower.
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:hashCode=2",
                *os.environ.get("EMU_HADOOP_JVM_OPTS", "").split(),
                jvmpath=_jvm_path(),
                classpath=[*cp.entries, str(driver)],
                convertStrings=True,
            )
        except OSError as e:
            raise InputError(
                "--scheduler-impl hadoop", None, f"the JVM did not start: {e}"
            ) from None
        _started = cp
    elif _started.entries != cp.entries:
        raise InputError(
            "--hadoop-classpath",
            None,
            f"this process already runs Hadoop from {_started.source}; "
            "a different classpath or --hadoop-version needs a new process",
        )
    return jpype.JClass("emu.hadoop.SchedulerDriver")


def jvm_started() -> bool:
    return _started is not None


def exit_process(code: int) -> NoReturn:
    """End an `emu` process that ran Hadoop's scheduler, skipping Python's
    finalization. The JVM is left running (Hadoop's timer threads would keep
    its orderly shutdown waiting), and during finalization a JVM thread that
    calls into Python (JPype runs a Python collection after each Java one)
    is ended by pthread_exit, whose unwinding through the JVM's frames aborts
    the process ("FATAL: exception not rethrown", SIGABRT) after its work
    is done. Called once every output is written and closed."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _jvm_path() -> str:
    import jpype

    home = os.environ.get("JAVA_HOME")
    if home:
        for rel in ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so"):
            p = os.path.join(home, rel)
            if os.path.exists(p):
                return p
    try:
        return str(jpype.getDefaultJVMPath())
    except Exception as e:
        raise InputError(
            "--scheduler-impl hadoop",
            None,
            f"no Java runtime found ({e}): install OpenJDK 17 or set JAVA_HOME",
        ) from None


def new_driver(
    scheduler_class: str,
    properties: dict[str, str],
    cluster_timestamp: int,
    explicit_classpath: str | None = None,
    source: str = "configuration",
    version: str = hcp.HADOOP_VERSION,
) -> SchedulerBackend:
    """A driver around a new instance of `scheduler_class`, configured with
    `properties`; a configuration the scheduler refuses is an InputError
    with the scheduler's own message. The driver implements the Java
    interface SchedulerBackend, which `emu.hadoop.contract` mirrors."""
    cls = start(explicit_classpath, version)
    import jpype

    keys = sorted(properties)
    try:
        driver: SchedulerBackend = cls(
            scheduler_class,
            jpype.JArray(jpype.JString)(keys),
            jpype.JArray(jpype.JString)([properties[k] for k in keys]),
            cluster_timestamp,
        )
    except jpype.JException as e:
        raise InputError(source, None, f"{scheduler_class} refused: {java_message(e)}") from None
    return driver
