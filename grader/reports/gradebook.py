"""The files a teacher takes away from a batch: gradebook.csv, and per submission results.json and junit.xml."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.grading.outcome import Grade, Status
from grader.reports.files import write_atomic
from grader.reports.gradescope import write_json
from grader.reports.text import feedback, points, reveals


def csv_text(grades: list[Grade], check_ids: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["submission", "total", *check_ids, "errors"])
    for g in grades:
        pts = {o.id: o.points for o in g.outcomes}
        w.writerow([g.submission, points(g.score), *(points(pts.get(c, 0)) for c in check_ids), g.problems()])
    return buf.getvalue()


def junit_xml(grade: Grade) -> str:
    """One testsuite, one testcase per check; a failure's message is the student's feedback."""
    suite = ET.Element("testsuite", name=grade.submission, tests=str(len(grade.outcomes)),
                       failures=str(sum(o.status is Status.FAILED for o in grade.outcomes)),
                       skipped=str(sum(o.status not in (Status.PASSED, Status.FAILED) for o in grade.outcomes)))
    props = ET.SubElement(suite, "properties")
    for key, value in (("rubric", grade.rubric), ("score", points(grade.score)), ("max_score", points(grade.max_score))):
        ET.SubElement(props, "property", name=key, value=value)
    for o in grade.outcomes:
        # CI tools read the classname's dots as packages: "chapter5.alice_py", not a class "py" in "chapter5.alice"
        case = ET.SubElement(suite, "testcase", classname=f"{grade.rubric}.{grade.submission.replace('.', '_')}", name=o.id)
        text = feedback(o, grade.mistakes())
        if o.status is Status.FAILED:
            ET.SubElement(case, "failure", message=text.splitlines()[0] if text else "failed").text = text
        elif o.status is not Status.PASSED:
            ET.SubElement(case, "skipped", message=o.message.splitlines()[0] if reveals(o) and o.message else o.status)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def export(out: Path, grades: list[Grade], check_ids: list[str]) -> None:
    """results.json, junit.xml and the gradebook, from the stored grades."""
    for g in grades:
        folder = out / g.submission
        write_json(folder / "results.json", g)  # the plugin's own writer: the same file as --grade-json
        write_atomic(folder / "junit.xml", junit_xml(g))
    write_atomic(out / "gradebook.csv", csv_text(grades, check_ids))
