"""Rubrics are validated data: a mistake is one line that names the field."""

import pytest

from grader.grading.rubric import RubricError, dumps, load

BASE = 'name = "r"\nexercise = "chapter5"\n[checks.loads]\npoints = 0\n'


def rubric(tmp_path, text):
    path = tmp_path / "r.toml"
    path.write_text(text)
    return str(path)


def test_bundled_rubric_is_100_points_and_ordered():
    r = load("chapter5")
    assert r.max_score == 100
    order = r.order()
    for cid, spec in r.checks.items():
        assert all(order.index(dep) < order.index(cid) for dep in spec.depends)
    assert order[-1] == "policy"


@pytest.mark.parametrize(
    "extra, field",
    [
        ("[checks.nonsense]\npoints = 1\n", "checks.nonsense: unknown check"),
        ("[checks.output_shape]\npoints = 1\ndepends = ['nope']\n", "checks.output_shape.depends"),
        ("[checks.output_shape]\npoints = 1\nvisibility = 'secret'\n", "checks.output_shape.visibility"),
        ("[checks.output_shape]\npoints = 'five'\n", "checks.output_shape.points"),
        ("[limits]\ncall_timeout = -1\n[checks.output_shape]\npoints = 1\n", "limits.call_timeout"),
        ("[checks.output_shape]\npoints = 1\ndepends = ['weights_sum_to_one']\n[checks.weights_sum_to_one]\npoints = 1\ndepends = ['output_shape']\n", "cycle"),
        ("[checks.output_shape]\npoints = 1\nspeling = 2\n", "checks.output_shape.speling"),
    ],
)
def test_invalid_rubric_names_the_field(tmp_path, extra, field):
    with pytest.raises(RubricError, match="rubric .*r.toml: ") as e:
        load(rubric(tmp_path, BASE + extra))
    assert field in str(e.value) and "\n" not in str(e.value)


def test_unknown_name_lists_bundled_rubrics():
    with pytest.raises(RubricError, match="chapter5"):
        load("chapter6")


def test_not_toml(tmp_path):
    with pytest.raises(RubricError, match="not valid TOML"):
        load(rubric(tmp_path, "name = \n"))


def test_packages_are_pip_requirements(tmp_path):
    ok = BASE + "[checks.output_shape]\npoints = 1\n"
    assert load(rubric(tmp_path, 'packages = ["einops>=0.7", "jaxtyping"]\n' + ok)).packages == ["einops>=0.7", "jaxtyping"]
    with pytest.raises(RubricError, match="packages") as e:
        load(rubric(tmp_path, 'packages = ["einops >= = 1"]\n' + ok))
    assert "\n" not in str(e.value)


def test_a_rubrics_packages_reach_the_wheels_requirements(tmp_path):
    """The student wheel and Gradescope's setup install the grader's wheel: its requirements carry the packages."""
    import zipfile

    from grader.frontends import wheel

    path = wheel.write(tmp_path, {"grader/__init__.py": b""}, requires=["einops>=0.7"])
    with zipfile.ZipFile(path) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
    assert "Requires-Dist: einops>=0.7" in meta.splitlines() and "Requires-Dist: hypothesis>=6.100" in meta.splitlines()


@pytest.mark.parametrize("name", ["cs336", "chapter5", "mha_module"])
def test_a_dumped_rubric_loads_back_alone(tmp_path, name):
    """What a student build ships: cs336's parts name bundled rubrics, which the build leaves out, so it is written
    with each part whole (its overrides applied) and loads back equal from a folder holding nothing else."""
    path = tmp_path / f"{name}.toml"
    path.write_text(dumps(load(name)))
    back = load(str(path))
    assert back.model_dump() == load(name).model_dump()
    if name == "cs336":
        assert "rubric =" not in path.read_text()
        assert "fully_masked_rows" not in back.parts["sdpa"].checks and back.parts["sdpa"].checks["mask_respected"].points == 16
