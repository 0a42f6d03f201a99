"""The CI report formats read back by their consumers' parsers: `--format junit` by
junitparser (the library CI plugins use to read JUnit XML), `--format checkstyle` by
Python's XML parser in the shape Checkstyle consumers read (warnings-ng, reviewdog), and
`--format gitlab` as GitLab's Code Quality report (the fields GitLab requires). Each is
compared with `--format json` on the same project: every finding is there, once.

Run through scripts/test-lsp-client.sh (it builds the binary and installs the pinned
packages), next to the language-server tests.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET

from junitparser import Error, Failure, JUnitXml

IDEMLINT = os.environ.get("IDEMLINT_BIN", "idemlint")
REPO = pathlib.Path(__file__).resolve().parents[2]


def run(project: pathlib.Path, fmt: str) -> str:
    out = subprocess.run(
        [IDEMLINT, "check", ".", "--format", fmt],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def project(tmp_path: pathlib.Path) -> pathlib.Path:
    """The fixtures, plus a file that cannot be parsed and a name that needs escaping."""
    root = tmp_path / "p"
    subprocess.run(["cp", "-r", str(REPO / "fixtures"), str(root)], check=True)
    (root / "broken.rs").write_text("fn f() {\n    let x = ;\n}\n")
    (root / 'A&B <"q">.kt').write_text(
        "import java.util.UUID\n\nsuspend fun charge(api: Api) =\n"
        "    retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n"
    )
    return root


def findings(root: pathlib.Path):
    report = json.loads(run(root, "json"))
    return report["findings"], report["errors"]


def test_junit_is_read_by_junitparser(tmp_path):
    root = project(tmp_path)
    expected, errors = findings(root)
    path = tmp_path / "idemlint.xml"
    path.write_text(run(root, "junit"))
    xml = JUnitXml.fromfile(str(path))
    got = []
    file_errors = []
    cases = 0
    for suite in xml:
        for case in suite:
            cases += 1
            for r in case.result:
                if isinstance(r, Failure):
                    assert case.name == suite.name, "one test case per rule per file"
                    got.append((case.classname, suite.name, r.type))
                elif isinstance(r, Error):
                    file_errors.append(case.classname)
    want = sorted((f["path"], f["rule"], f["severity"]) for f in expected)
    assert sorted(got) == want
    assert sorted(file_errors) == sorted(e["path"] for e in errors)
    assert xml.failures == len(expected)
    assert xml.errors == len(errors)
    assert xml.tests == cases
    assert any(f[0] == 'A&B <"q">.kt' for f in got), "names survive escaping"


def test_checkstyle_has_the_shape_consumers_read(tmp_path):
    root = project(tmp_path)
    expected, errors = findings(root)
    tree = ET.fromstring(run(root, "checkstyle"))
    assert tree.tag == "checkstyle" and tree.get("version")
    got = []
    notices = []
    names = [f.get("name") for f in tree.findall("file")]
    assert names == sorted(set(names)), "one <file> per path, sorted"
    for file in tree.findall("file"):
        for e in file.findall("error"):
            assert e.get("severity") in ("error", "warning", "info")
            assert e.get("message")
            source = e.get("source")
            assert source.startswith("idemlint.")
            if source == "idemlint.file-not-analysed":
                notices.append(file.get("name"))
                continue
            got.append(
                (file.get("name"), int(e.get("line")), int(e.get("column")), source[9:])
            )
    want = sorted((f["path"], f["line"], f["column"], f["rule"]) for f in expected)
    assert sorted(got) == want
    assert sorted(notices) == sorted(e["path"] for e in errors)


def test_gitlab_code_quality_report(tmp_path):
    root = project(tmp_path)
    expected, _ = findings(root)
    issues = json.loads(run(root, "gitlab"))
    assert isinstance(issues, list) and len(issues) == len(expected)
    fingerprints = set()
    for issue, f in zip(issues, expected):
        # The fields GitLab's Code Quality report requires, with their types.
        assert isinstance(issue["description"], str) and issue["description"]
        assert issue["check_name"] == f["rule"]
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        fingerprints.add(issue["fingerprint"])
        assert issue["location"]["path"] == f["path"]
        assert not issue["location"]["path"].startswith("/")
        assert issue["location"]["lines"]["begin"] == f["line"]
    assert len(fingerprints) == len(issues), "fingerprints are unique"
