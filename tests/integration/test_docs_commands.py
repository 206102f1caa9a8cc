"""The "Coming from SLS" commands of README.md and docs/coming-from-sls.md,
parsed out of the documents and run as written (from a directory holding
Hadoop's SLS files, as the documents say), finish every job of their traces.
Parsing them here means the documents cannot drift from what works."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from emu.cli import main
from tests.reference import REFERENCE_DIR

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"`(emu (?:sls|rumen2sls) [^`]+)`")


def sls_section(path: Path) -> str:
    """README's "Coming from SLS" section; all of the docs page."""
    text = path.read_text()
    if path.name != "README.md":
        return text
    start = text.index("## Coming from SLS")
    return text[start : text.index("\n## ", start + 1)]


def commands(text: str) -> list[str]:
    """Inline `emu ...` commands and the `emu` lines of sh blocks (with their
    continuation lines), in document order."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in COMMAND.finditer(text)]
    for block in re.finditer(r"```sh\n(.*?)```", text, re.S):
        joined = block.group(1).replace("\\\n", " ")
        for line in joined.splitlines():
            if line.startswith(("emu sls ", "emu rumen2sls ")):
                found.append((block.start(), " ".join(line.split())))
    return [cmd for _, cmd in sorted(found)]


@pytest.mark.parametrize("doc", ["README.md", "docs/coming-from-sls.md"])
def test_documented_sls_commands_finish_their_jobs(doc, tmp_path, monkeypatch, capsys):
    cmds = commands(sls_section(ROOT / doc))
    assert len(cmds) >= 4, cmds
    for name in ("sample-conf", "sample-data", "test-resources"):
        (tmp_path / name).symlink_to(REFERENCE_DIR / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    for cmd in cmds:
        argv = shlex.split(cmd)[1:]
        code = main(argv)
        out = capsys.readouterr()
        assert code == 0, f"{cmd}\n{out.out}\n{out.err}"
        if argv[0] == "sls":
            out_dir = next(a.split("=", 1)[1] for a in argv if a.startswith("--output-dir="))
            summary = json.loads((tmp_path / out_dir / "summary.json").read_text())
            assert summary["jobs"], cmd
            assert {j["final_status"] for j in summary["jobs"]} == {"SUCCEEDED"}, cmd
