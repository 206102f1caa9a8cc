"""Hadoop's own SLS (hadoop-sls 3.4.2's SLSRunner) as a second witness
beside emu: the same case replayed by the simulator emu imitates.

SLS runs on the wall clock with real threads, so two runs of one case differ;
`sls_table` runs each case twice and sets emu-vs-SLS beside SLS-vs-SLS, the
noise floor below which a difference from SLS says nothing.

SLS is run as `slsrun.sh` runs it: `java -cp CONF_DIR:JARS ... -tracetype T
-tracelocation F -output D [-nodes N]` in a process of its own, reading its
configuration from the conf directory on the classpath (SLS has no -D, so the
case's properties are written into a copy of its conf directory). What
differs from the stock script is what 3.4.2 needs to replay the case as
earlier releases did and as emu does; each run lists it in `notes`:

- the main class is `emu.fidelity.sls.SlsLauncher` (emu/fidelity/sls/), which
  calls SLSRunner as Hadoop's own tests do: the stock `SLSRunner.main`
  builds the RM's configuration from `new Configuration(false)`, never reads
  yarn-site.xml and fails on `Class.forName(null)` in RMRunner.startRM;
- SLS traces: AMRunner's reader is replaced (SlsTraceJobs.java): 3.4.2
  parses each job as Map<String, String>, Jackson rejects the `job.tasks`
  array, and every job is dropped ("Failed to create an AM"), so the run
  never ends;
- Rumen and SYNTH traces: 3.4.2 gives each job its own submission time as
  the baseline, so every job is submitted at simulated time 0; the first
  job's submission is made the baseline of all, as before 3.4 (`FIXES`);
- the reservation system is switched off (Hadoop's sample yarn-site.xml
  enables it): it turns the reservable sls_queue_1 into a plan queue whose
  `-default` child the plan follower has not created when the first job is
  submitted at time 0, so that job fails; emu does not model reservations.

The changed sources (AMRunner, AMDefinitionFactory, AMDefinitionSynth) are
hadoop-sls's own, from its sources jar, with the few lines in `FIXES`
replaced, compiled into emu's cache and put before hadoop-sls on the
classpath.

The RM's and SLS's ports are set to 0 (ephemeral), so runs can overlap, and
hadoop.security.token.service.use_ip defaults to false (`NO_DNS`).

SLS writes `jobruntime.csv` with application ids and, for simulate_*, epoch
milliseconds (its AMs take a baseline of 0). The launcher records the task
runner's start (`sls-start-ms`) and each trace job's application id
(`jobids.csv`); `run_sls` writes `jobruntime-normalized.csv` beside SLS's
file, with trace job ids and simulated milliseconds from the runner's start,
comparable with emu's jobruntime.csv.

The classpath (emu/fidelity/sls/pom.xml) is resolved with Maven once and
kept in emu's cache (emu.hadoop.classpath.cached_classpath, the cache of the
schedulers' classpath too).
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from emu.fidelity import compare
from emu.fidelity.compare import JobDeltas, JobTimes
from emu.fidelity.suite import Case
from emu.hadoop import classpath as hcp

SLS_DIR = Path(__file__).resolve().parent / "sls"
POM = SLS_DIR / "pom.xml"
JAVA_SOURCES = (SLS_DIR / "SlsLauncher.java", SLS_DIR / "SlsTraceJobs.java")
MAIN_CLASS = "emu.fidelity.sls.SlsLauncher"
JAVA_OPTS = (
    # Guice (the RM's web app) defines classes reflectively.
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
)
AMRUNNER = "org/apache/hadoop/yarn/sls/AMRunner.java"


@dataclass(frozen=True)
class _Fix:
    """A change to one source file of hadoop-sls (from its sources jar),
    needed to run one trace type."""

    tracetype: str
    old: str
    new: str
    note: str
    path: str = AMRUNNER


FIXES = (
    _Fix(
        "SLS",
        """      JavaType type = mapper.getTypeFactory().
          constructMapType(Map.class, String.class, String.class);
      Iterator<Map<String, String>> jobIter = mapper.readValues(
          jsonF.createParser(input), type);""",
        """      Iterator<Map<String, String>> jobIter =
          emu.fidelity.sls.SlsTraceJobs.read(mapper, jsonF.createParser(input));""",
        "AMRunner's SLS trace reader fixed (3.4.2 drops every job)",
    ),
    _Fix(
        "RUMEN",
        """        try {
          AMDefinitionRumen amDef =
              AMDefinitionFactory.createFromRumenTrace(job, baselineTimeMS,
                  slsRunner);""",
        """        try {
          if (baselineTimeMS == 0) {
            baselineTimeMS = job.getSubmitTime();
          }
          AMDefinitionRumen amDef =
              AMDefinitionFactory.createFromRumenTrace(job, baselineTimeMS,
                  slsRunner);""",
        "Rumen jobs offset from the first job's submission (3.4.2 starts every job at 0)",
    ),
    _Fix(
        "SYNTH",
        "            .withBaseLineTimeMs(0)",
        "            .withBaseLineTimeMs(\n"
        "                emu.fidelity.sls.SlsTraceJobs.synthBaseline(job.getSubmissionTime()))",
        "SYNTH jobs offset from the first job's submission (3.4.2 starts every job at 0)",
        "org/apache/hadoop/yarn/sls/AMDefinitionFactory.java",
    ),
    _Fix(
        "SYNTH",
        """      if (baselineTimeMs == 0) {
        baselineTimeMs = jobStartTime;
      }
      adjustTimeValuesToBaselineTime(amDef, this, baselineTimeMs);""",
        "      adjustTimeValuesToBaselineTime(amDef, this, baselineTimeMs);",
        "",
        "org/apache/hadoop/yarn/sls/AMDefinitionSynth.java",
    ),
)
"""What hadoop-sls 3.4.2 gets wrong, by trace type. SLS traces: see
SlsTraceJobs.java. Rumen and SYNTH traces: AMRunner (Rumen) and
AMDefinitionFactory (SYNTH) pass a baseline of 0 for every job, and the
AMDefinition builders take 0 for "none" and each job's own submission time
as its baseline, so every job is submitted at simulated time 0; before 3.4
the first job's submission was the baseline of all. (An empty note: the
change goes with the one before it.)"""


RM_PORTS = {
    "yarn.resourcemanager.address": "localhost:0",
    "yarn.resourcemanager.scheduler.address": "localhost:0",
    "yarn.resourcemanager.resource-tracker.address": "localhost:0",
    "yarn.resourcemanager.admin.address": "localhost:0",
    "yarn.resourcemanager.webapp.address": "localhost:0",
}
SLS_PORTS = {"yarn.sls.metrics.web.address.port": "0"}
NO_DNS = {"hadoop.security.token.service.use_ip": "false"}
"""SLS's nodes (node1, ...) do not resolve; with the default (true) the RM
fails on UnknownHostException when it makes a container's token. Hadoop's
sample yarn-site.xml for SLS sets it for that reason."""
RESERVATIONS = "yarn.resourcemanager.reservation-system.enable"
LOG4J = """\
# SLS's log: warnings and errors only, on stderr (kept in sls.stderr).
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
"""
JUL = "handlers=\n.level=OFF\n"
"""java.util.logging (Jersey's INFO lines) off."""

NO_FIFO = (
    "SLS has no FIFO: hadoop-sls 3.4.2's RMRunner.startRM throws "
    "'Fifo Scheduler is not supported yet.'"
)
NORMALIZED = "jobruntime-normalized.csv"
_EPOCH_MS = 10**11
"""simulate_* values above this are epoch milliseconds, not simulated ones."""


@dataclass(frozen=True)
class SlsOracleRun:
    """One SLS run of a case."""

    case: str
    status: str
    """ok, failed, timeout, no-fifo (SLS refuses the FifoScheduler) or
    unavailable (no Java, Maven or network to fetch hadoop-sls)."""
    reason: str = ""
    """Why it is not ok, in a line or a few (the end of SLS's stderr)."""
    wall_s: float = 0.0
    """The JVM's wall time, start to exit (JVM start and RM start included)."""
    exit_code: int | None = None
    out: Path | None = None
    """SLS's --output-dir."""
    jobruntime: Path | None = None
    """jobruntime-normalized.csv: trace job ids, simulated ms."""
    raw_jobruntime: Path | None = None
    """SLS's own jobruntime.csv."""
    jobs: int = 0
    """Jobs in jobruntime.csv."""
    notes: tuple[str, ...] = ()
    """What was changed from a stock slsrun.sh run (see the module docstring)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class SlsUnavailable(Exception):
    """SLS cannot run here (the message says why)."""


# --- classpath and launcher -----------------------------------------------------


def classpath(fetch: bool = True) -> tuple[list[str], Path]:
    """SLS's runtime jars and hadoop-sls's sources jar, resolved by Maven
    from emu/fidelity/sls/pom.xml once and listed in emu's cache."""
    try:
        entries = hcp.cached_classpath(POM, "sls-classpath", fetch)
    except hcp.JavaBuildError as e:
        if e.no_tool:
            raise SlsUnavailable(
                "Maven is not installed to fetch hadoop-sls (install Maven 3)"
            ) from None
        raise SlsUnavailable(
            f"Maven could not fetch hadoop-sls {hcp.HADOOP_VERSION} ({e})"
        ) from None
    if entries is None:
        raise SlsUnavailable(f"hadoop-sls {hcp.HADOOP_VERSION} is not fetched yet")
    sources = [p for p in entries if p.endswith("-sources.jar")]
    if not sources:
        raise SlsUnavailable(f"{POM} resolved without hadoop-sls's sources jar")
    return [p for p in entries if not p.endswith("-sources.jar")], Path(sources[0])


def launcher_classes(jars: list[str], sources_jar: Path, tracetype: str = "") -> Path:
    """SlsLauncher, and the sources `tracetype`'s FIXES change, compiled against
    `jars`, once per source and classpath, in emu's cache."""
    texts = [p.read_bytes() for p in JAVA_SOURCES]
    patched: dict[str, str] = {}
    fixes = [f for f in FIXES if f.tracetype == tracetype]
    if fixes:
        with zipfile.ZipFile(sources_jar) as z:
            for fix in fixes:
                text = patched.get(fix.path) or z.read(fix.path).decode("utf-8")
                if text.count(fix.old) != 1:
                    raise SlsUnavailable(
                        f"{sources_jar.name}: {fix.path.rsplit('/', 1)[-1]} is not the one "
                        f"emu knows how to fix; {tracetype} traces cannot run"
                    )
                patched[fix.path] = text.replace(fix.old, fix.new)
    fixed = "".join(patched[k] for k in sorted(patched))
    key = hashlib.sha256(
        b"".join(texts) + fixed.encode() + os.pathsep.join(jars).encode()
    ).hexdigest()[:16]
    out = hcp.cache_dir() / "sls-launcher" / key
    if out.is_dir():
        return out
    with tempfile.TemporaryDirectory() as src:
        files = list(JAVA_SOURCES)
        for path, text in sorted(patched.items()):
            source = Path(src) / path.rsplit("/", 1)[-1]
            source.write_text(text, encoding="utf-8")
            files.append(source)
        try:
            return hcp.javac(files, os.pathsep.join(jars), out)
        except hcp.JavaBuildError as e:
            if e.no_tool:
                raise SlsUnavailable(str(e)) from None
            raise SlsUnavailable(f"the SLS launcher does not compile: {e}") from None


# --- configuration directory -----------------------------------------------------


def _set_properties(path: Path, props: Mapping[str, str], only_existing: bool = False) -> None:
    """Set `props` in a Hadoop configuration XML file (created if absent);
    with `only_existing`, only those the file already names."""
    if path.is_file():
        tree = ET.parse(path)
        root = tree.getroot()
    else:
        root = ET.Element("configuration")
        tree = ET.ElementTree(root)
    existing = {(p.findtext("name") or "").strip(): p for p in root.findall("property")}
    changed = False
    for name, value in props.items():
        prop = existing.get(name)
        if prop is None:
            if only_existing:
                continue
            prop = ET.SubElement(root, "property")
            ET.SubElement(prop, "name").text = name
        node = prop.find("value")
        if node is None:
            node = ET.SubElement(prop, "value")
        node.text = value
        changed = True
    if changed or not path.is_file():
        ET.indent(tree)
        tree.write(path, encoding="utf-8", xml_declaration=True)


def _property(path: Path, name: str) -> str | None:
    if not path.is_file():
        return None
    for p in ET.parse(path).getroot().findall("property"):
        if (p.findtext("name") or "").strip() == name:
            return (p.findtext("value") or "").strip()
    return None


def conf_dir(case: Case, dest: Path) -> tuple[Path, list[str]]:
    """A copy of the case's conf dir with its properties written in (SLS
    has no -D): into yarn-site.xml, into sls-runner.xml for yarn.sls.*, and
    into any other file of the directory that already sets them, as a -D
    would override it. Returns the directory and the notes for the run."""
    notes: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    if case.conf is not None:
        for f in sorted(case.conf.iterdir()):
            if f.is_file() and f.suffix in (".xml", ".properties"):
                shutil.copy(f, dest / f.name)
    props = dict(case.properties)
    yarn, runner = dest / "yarn-site.xml", dest / "sls-runner.xml"
    if (props.get(RESERVATIONS) or _property(yarn, RESERVATIONS) or "").lower() == "true":
        notes.append("reservation system off (emu does not model it)")
    yarn_props = {k: v for k, v in props.items() if not k.startswith("yarn.sls.")}
    _set_properties(yarn, {**NO_DNS, **yarn_props, **RM_PORTS, RESERVATIONS: "false"})
    sls_props = {k: v for k, v in props.items() if k.startswith("yarn.sls.")}
    _set_properties(runner, yarn_props, only_existing=True)
    _set_properties(runner, {**sls_props, **SLS_PORTS})
    for f in sorted(dest.glob("*.xml")):
        if f.name not in ("yarn-site.xml", "sls-runner.xml"):
            _set_properties(f, props, only_existing=True)
    (dest / "log4j.properties").write_text(LOG4J)
    (dest / "jul.properties").write_text(JUL)
    return dest, notes


# --- running ---------------------------------------------------------------------


def run_sls(
    case: Case, workdir: Path, timeout_s: float = 900, expected_jobs: int | None = None
) -> SlsOracleRun:
    """Replay `case` through Hadoop's SLS in `workdir` (conf/, out/,
    sls.stdout, sls.stderr). Never raises for a run that fails: the result
    says why. SLS exits by itself when its last application finishes; an
    application that fails at submission never finishes, so with
    `expected_jobs` the run also ends once that many jobs have finished or
    failed, and `timeout_s` ends it in any case."""
    if case.scheduler == "fifo":
        return SlsOracleRun(case.name, "no-fifo", NO_FIFO)
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    case = case.materialize(workdir)
    try:
        jars, sources = classpath()
        classes = launcher_classes(jars, sources, case.tracetype)
        java = hcp.java_home_tool("java")
        if java is None:
            raise SlsUnavailable("needs Java (java on PATH or in JAVA_HOME): install OpenJDK 17")
    except (SlsUnavailable, OSError) as e:
        return SlsOracleRun(case.name, "unavailable", str(e))
    try:
        conf, notes = conf_dir(case, workdir / "conf")
    except (OSError, ET.ParseError) as e:
        return SlsOracleRun(case.name, "failed", f"cannot write SLS's conf dir: {e}")
    notes[:0] = ["run by SlsLauncher (stock SLSRunner.main never reads yarn-site.xml)"] + [
        f.note for f in FIXES if f.tracetype == case.tracetype and f.note
    ]
    out = workdir / "out"
    shutil.rmtree(out, ignore_errors=True)
    args = ["-tracetype", case.tracetype, "-tracelocation", ",".join(map(str, case.traces))]
    args += ["-output", str(out)]
    if case.nodes is not None:
        args += ["-nodes", str(case.nodes)]
    cp = os.pathsep.join([str(conf), str(classes), *jars])
    cmd = [java, *JAVA_OPTS, f"-Djava.util.logging.config.file={conf / 'jul.properties'}"]
    cmd += ["-cp", cp, MAIN_CLASS, *args]
    status, reason, code, wall = _supervise(cmd, workdir, out, timeout_s, expected_jobs)
    raw = out / "jobruntime.csv"
    normalized, jobs = None, 0
    if raw.is_file():
        normalized = out / NORMALIZED
        jobs = normalize_jobruntime(raw, normalized, out / "sls-start-ms", out / "jobids.csv")
    if status == "ok" and jobs == 0:
        status, reason = "failed", "SLS finished no job. " + reason
    if status == "ok" and expected_jobs is not None and jobs < expected_jobs:
        status = "failed"
        reason = f"{jobs} of {expected_jobs} jobs finished. " + reason
    return SlsOracleRun(
        case.name,
        status,
        reason.strip(),
        wall,
        code,
        out,
        normalized,
        raw if raw.is_file() else None,
        jobs,
        tuple(notes),
    )


def _supervise(
    cmd: list[str], workdir: Path, out: Path, timeout_s: float, expected: int | None
) -> tuple[str, str, int | None, float]:
    """Run SLS; end it on exit, on a failure of its main thread, once
    `expected` jobs are done, or at the timeout. (status, reason, exit
    code, wall seconds)."""
    stdout, stderr = workdir / "sls.stdout", workdir / "sls.stderr"
    start = time.perf_counter()
    with stdout.open("wb") as so, stderr.open("wb") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, cwd=workdir)
        status, reason, done_at = "", "", None
        try:
            while proc.poll() is None:
                time.sleep(0.5)
                elapsed = time.perf_counter() - start
                log = _read(stderr)
                if 'Exception in thread "main"' in log:
                    status, reason = "failed", _main_failure(log)
                    break
                if expected is not None:
                    finished = _rows(out / "jobruntime.csv")
                    failed = log.count("Application Finished - Failed")
                    if finished + failed >= expected:
                        done_at = done_at or elapsed
                        if elapsed - done_at > 10:
                            status = "ok"
                            reason = f"{failed} job(s) failed in SLS" if failed else ""
                            break
                if elapsed > timeout_s:
                    status, reason = "timeout", f"timed out after {timeout_s:.0f} s"
                    break
        finally:
            wall = time.perf_counter() - start
            if proc.poll() is None:
                _stop(proc)
    code = proc.returncode
    log = _read(stderr)
    if not status:
        status = "ok" if code == 0 else "failed"
        if code != 0:
            reason = f"exit {code}"
    if status != "ok" or "Failed to create an AM" in log:
        reason = (reason + "\n" + _tail(log)).strip()
    return status, reason, code, wall


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the launcher's shutdown hook writes jobids.csv), then kill."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _rows(path: Path) -> int:
    try:
        return max(0, len(path.read_text().strip().splitlines()) - 1)
    except OSError:
        return 0


def _main_failure(log: str) -> str:
    lines = log.splitlines()
    i = next(i for i, ln in enumerate(lines) if 'Exception in thread "main"' in ln)
    causes = [ln.strip() for ln in lines[i:] if ln.startswith("Caused by")]
    return lines[i].strip() + (f" ({causes[-1]})" if causes else "")


def _tail(log: str, lines: int = 6) -> str:
    """The last lines of SLS's log that are not stack frames or the metrics
    reporter's start-up noise (it reads queues before the scheduler has any)."""
    noise = ("ScheduledReporter", "queueManager", "NativeCodeLoader", "FileSignerSecret")
    kept = [
        ln
        for ln in log.strip().splitlines()
        if ln.strip() and not ln.lstrip().startswith("at ") and not any(n in ln for n in noise)
    ]
    return "\n".join(kept[-lines:])


# --- jobruntime.csv -----------------------------------------------------------------


def normalize_jobruntime(raw: Path, dest: Path, start_file: Path, ids_file: Path) -> int:
    """Write SLS's jobruntime.csv as `dest` with trace job ids (from the
    launcher's jobids.csv, when written) and simulate_* in ms from the task
    runner's start (from sls-start-ms, else the earliest start less its
    trace start). Returns the number of jobs."""
    with raw.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ids: dict[str, str] = {}
    if ids_file.is_file():
        with ids_file.open(newline="", encoding="utf-8") as f:
            ids = {r["app_id"]: r["job_id"] for r in csv.DictReader(f) if r["app_id"]}
    base = 0
    starts = [int(float(r["simulate_start_time"])) for r in rows]
    if starts and max(starts) > _EPOCH_MS:
        text = _read(start_file).strip()
        if text.isdigit():
            base = int(text)
        else:
            traced = [int(float(r["real_start_time"])) for r in rows]
            base = min(s - t for s, t in zip(starts, traced, strict=True))
    lines = ["JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"]
    for r in rows:
        s = int(float(r["simulate_start_time"])) - base
        e = int(float(r["simulate_end_time"])) - base
        job = ids.get(r["JobID"], r["JobID"])
        lines.append(f"{job},{r['real_start_time']},{r['real_end_time']},{s},{e}")
    dest.write_text("\n".join(lines) + "\n")
    return len(rows)


def compare_jobruntime(a: Path, b: Path, ids: Mapping[str, str] | None = None) -> JobDeltas:
    """Per-job start and end differences (simulate_* columns, ms) between
    two jobruntime.csv files.

    Jobs are matched by id, after renaming b's ids through `ids` (b's id to
    a's) when given. When the two files share no id at all (one names jobs
    by application id, the other by trace job id), they are matched in
    submission order instead: application ids by their sequence number,
    other ids by start time, then id. Jobs left over are `missing`."""
    ja, jb = compare.read_jobruntime(a), compare.read_jobruntime(b)
    if ids:
        jb = {ids.get(k, k): v for k, v in jb.items()}
    if ja and jb and not set(ja) & set(jb):
        oa, ob = _submission_order(ja), _submission_order(jb)
        renamed = {ob[i]: oa[i] for i in range(min(len(oa), len(ob)))}
        jb = {renamed.get(k, k): v for k, v in jb.items()}
    return compare.job_deltas(ja, jb)


def _submission_order(jobs: Mapping[str, JobTimes]) -> list[str]:
    def key(job: str) -> tuple[int, int, str]:
        if job.startswith("application_"):
            tail = job.rsplit("_", 1)[-1]
            if tail.isdigit():
                return (0, int(tail), job)
        return (1, jobs[job].start_ms, job)

    return sorted(jobs, key=key)


# --- the table ---------------------------------------------------------------------


@dataclass(frozen=True)
class SlsRow:
    """One case of the SLS table."""

    case: str
    scheduler: str
    runs: tuple[SlsOracleRun, ...] = ()
    noise: JobDeltas | None = None
    """SLS run 1 against SLS run 2: the noise floor."""
    emu_vs_sls: tuple[JobDeltas, ...] = ()
    """emu against each SLS run that finished."""
    emu_wall_s: float | None = None
    note: str = ""
    """Why a column is empty (no FIFO, a failed run, no emu run)."""


def sls_cases(cases: Iterable[Case]) -> list[Case]:
    """The cases the table covers: `sls = true` ones, and the FIFO cases
    that would otherwise be (listed as having no SLS run)."""
    return [c for c in cases if c.sls or c.scheduler == "fifo"]


def sls_table(
    cases: Iterable[Case],
    workdir: Path,
    emu_results: Mapping[str, tuple[Path, float]],
    runs: int = 2,
    timeout_s: float | None = None,
) -> list[SlsRow]:
    """Run each of `sls_cases(cases)` through SLS `runs` times (one after
    the other: SLS is timed by the wall clock, so a busy machine is noise) in
    `workdir/<case>/sls-<n>/` and compare. `emu_results` maps a case name to
    emu's run of it: its output directory (with jobruntime.csv) and wall
    seconds. Without `timeout_s`, a run may take 1.5 times the simulated span
    of emu's run plus two minutes (15 minutes without an emu run)."""
    rows: list[SlsRow] = []
    for case in sls_cases(cases):
        if case.scheduler == "fifo":
            rows.append(SlsRow(case.name, case.scheduler, note=NO_FIFO))
            continue
        emu_out, emu_wall = emu_results.get(case.name, (None, None))
        emu_csv = Path(emu_out) / "jobruntime.csv" if emu_out is not None else None
        if emu_csv is not None and not emu_csv.is_file():
            emu_csv = None
        expected, limit = None, timeout_s or 900.0
        if emu_csv is not None:
            emu_jobs = compare.read_jobruntime(emu_csv)
            expected = len(emu_jobs)
            span = max((j.end_ms for j in emu_jobs.values()), default=0) / 1000
            limit = timeout_s or 1.5 * span + 120
        done = tuple(
            run_sls(case, workdir / case.name / f"sls-{i + 1}", limit, expected)
            for i in range(runs)
        )
        good = [r.jobruntime for r in done if r.ok and r.jobruntime is not None]
        noise = compare_jobruntime(good[0], good[1]) if len(good) >= 2 else None
        vs = tuple(compare_jobruntime(emu_csv, g) for g in good) if emu_csv is not None else ()
        notes = [f"run {i + 1}: {r.status}: {r.reason.splitlines()[0] if r.reason else ''}"
                 for i, r in enumerate(done) if not r.ok]  # fmt: skip
        if emu_csv is None:
            notes.append("no emu run")
        rows.append(SlsRow(case.name, case.scheduler, done, noise, vs, emu_wall, "; ".join(notes)))
    return rows


def _ms(d: JobDeltas | None, attr: str) -> str:
    return "-" if d is None else f"{getattr(d, attr) / 1000:.1f}"


def _deltas(ds: Iterable[JobDeltas], attr: str) -> str:
    vals = [_ms(d, attr) for d in ds]
    return " / ".join(vals) if vals else "-"


def render_markdown(rows: list[SlsRow], emu_label: str = "emu") -> str:
    """A Markdown section for docs/fidelity.md: per case, SLS's wall time per
    run, SLS against itself (the noise floor) and `emu_label` against each
    SLS run, as the largest start and end differences and the 95th
    percentile of end differences, in seconds, and the jobs that differ."""
    out = [
        "## Hadoop's SLS as a second witness",
        "",
        "Each case replayed twice by Hadoop 3.4.2's own SLS (`emu.fidelity.sls_oracle`), "
        "which runs on the wall clock: SLS-vs-SLS is the noise floor, "
        f"{emu_label}-vs-SLS is against each SLS run. Seconds; "
        "start / end: largest per-job difference; p95: of end differences; "
        "differ: jobs whose start or end differ at all, of all jobs. "
        f"{emu_label} replays with `emu sls`'s default timing of the AMs and NMs, "
        "SLS's own (`--timing=sls`, emu/timing.py).",
        "",
        "| case | SLS wall (s) | SLS vs SLS start / end / p95 | differ "
        f"| {emu_label} vs SLS start | end | p95 | differ | {emu_label} wall (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not r.runs:
            out.append(f"| {r.case} | {r.note} | | | | | | | |")
            continue
        walls = " / ".join(f"{x.wall_s:.0f}" for x in r.runs)
        n = r.noise
        noise = (
            "-"
            if n is None
            else f"{_ms(n, 'max_start_ms')} / {_ms(n, 'max_end_ms')} / {_ms(n, 'p95_end_ms')}"
        )
        ndiff = "-" if n is None else f"{n.differing}/{n.jobs}" + _missing(n)
        vdiff = " / ".join(f"{d.differing}/{d.jobs}" + _missing(d) for d in r.emu_vs_sls) or "-"
        emu_wall = "-" if r.emu_wall_s is None else f"{r.emu_wall_s:.2f}"
        out.append(
            f"| {r.case} | {walls} | {noise} | {ndiff} | {_deltas(r.emu_vs_sls, 'max_start_ms')} "
            f"| {_deltas(r.emu_vs_sls, 'max_end_ms')} | {_deltas(r.emu_vs_sls, 'p95_end_ms')} "
            f"| {vdiff} | {emu_wall} |"
        )
    notes = [f"- {r.case}: {r.note}" for r in rows if r.runs and r.note]
    changed = sorted({n for r in rows for x in r.runs for n in x.notes})
    if changed:
        notes.append("- SLS was run with: " + "; ".join(changed) + " (see sls_oracle's docstring)")
    if notes:
        out += ["", *notes]
    return "\n".join(out) + "\n"


def _missing(d: JobDeltas) -> str:
    return f" ({len(d.missing)} missing)" if d.missing else ""


__all__ = [
    "SlsOracleRun",
    "SlsRow",
    "SlsUnavailable",
    "classpath",
    "compare_jobruntime",
    "conf_dir",
    "normalize_jobruntime",
    "render_markdown",
    "run_sls",
    "sls_cases",
    "sls_table",
]
