"""The loader turns what a student handed in into source and an entry point, or an error they can act on."""

import pytest

from grader.exercises import EXERCISES
from grader.submission.loader import read
from grader.submission.policy import violations
from grader.submission.source import LoadError

NAMES = EXERCISES["chapter5"].entry_points


def write(tmp_path, text, name="sub.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_syntax_error_names_file_and_line(tmp_path):
    path = write(tmp_path, "import torch\n\ndef attention(q, k, v)\n    return q, q\n")
    with pytest.raises(LoadError, match=r"syntax error in .*sub\.py, line 3"):
        read(path, NAMES)


def test_misspelt_function_gets_did_you_mean(tmp_path):
    path = write(tmp_path, "def atention(q, k, v, causal=True):\n    return q, q\n")
    with pytest.raises(LoadError, match=r"Did you mean to name 'atention' 'attention'\?"):
        read(path, NAMES)


def test_signature_that_cannot_take_qkv(tmp_path):
    path = write(tmp_path, "def attention(x):\n    return x, x\n")
    with pytest.raises(LoadError, match=r"cannot be called as attention\(q, k, v\)"):
        read(path, NAMES)


@pytest.mark.parametrize("sig", ["q, k, v", "q, k, v, causal=True", "*args", "q, k, v, *, causal=True", "q, *kv, **kw"])
def test_signatures_that_can_take_qkv(tmp_path, sig):
    source, entry = read(write(tmp_path, f"def causal_attention({sig}):\n    pass\n"), NAMES)
    assert entry == "causal_attention"


def test_accepted_names_in_order_and_assignments(tmp_path):
    source, entry = read(write(tmp_path, "import torch.nn.functional as F\nattention = F.scaled_dot_product_attention\n"), NAMES)
    assert entry == "attention"


def test_folder_picks_the_file_that_defines_the_function(tmp_path):
    write(tmp_path, "X = 1\n", "helpers.py")
    write(tmp_path, "from helpers import X\ndef attention(q, k, v):\n    return q, q\n", "main.py")
    source, entry = read(tmp_path, NAMES)
    assert source.filename.endswith("main.py") and source.folder == str(tmp_path)


def test_missing_path_and_wrong_kind(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        read(tmp_path / "nope.py", NAMES)
    with pytest.raises(LoadError, match="not a .py file"):
        read(write(tmp_path, "hi", "notes.txt"), NAMES)
    with pytest.raises(LoadError, match="holds no .py"):
        (tmp_path / "empty").mkdir()
        read(tmp_path / "empty", NAMES)


@pytest.mark.parametrize(
    "code",
    [
        "import reference",
        "from reference.chapter5 import scaled_dot_product_attention",
        "import grader.checks as c",
        "from grader.reference.chapter5 import scaled_dot_product_attention",
        "import importlib\nm = importlib.import_module('reference.chapter5')",
        "m = __import__('grader')",
    ],
)
def test_policy_sees_every_static_route(code):
    assert violations(code, ["reference", "grader"])


def test_policy_ignores_innocent_code():
    assert violations("import torch\nreference_answer = 3\ns = 'reference'\n", ["reference", "grader"]) == []


# -- a folder where no file defines the entry point: the error names the file where it belongs -----------------------
ROPE = "run_multihead_self_attention_with_rope"
SIBLINGS = ("run_scaled_dot_product_attention", "run_multihead_self_attention")


def cs336_folder(tmp_path):
    """A CS336 folder whose tests/adapters.py lacks the RoPE adapter: cs336_basics/model.py comes first."""
    (tmp_path / "cs336_basics").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    write(tmp_path, "def softmax(x, dim):\n    return x\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
                    "    return q\n", "cs336_basics/model.py")
    write(tmp_path, "".join(f"def {n}(*args):\n    from cs336_basics.model import softmax\n\n" for n in SIBLINGS),
          "tests/adapters.py")
    return tmp_path


def test_a_missing_part_entry_point_is_said_of_the_file_with_the_sibling_adapters(tmp_path):
    folder = cs336_folder(tmp_path)
    with pytest.raises(LoadError) as e:
        read(folder, (ROPE,), ("d_model",), others=SIBLINGS)
    said = str(e.value)
    assert said.startswith(f"{folder / 'tests' / 'adapters.py'}: no function named {ROPE} (the file defines: "
                           f"{', '.join(SIBLINGS)})"), said
    assert "Did you mean" not in said  # a sibling adapter is not a misspelling of this one


def test_the_cs336_rubric_names_the_adapters_file_for_its_rope_part(tmp_path):
    from grader.grading.engine import Grading
    from grader.grading.rubric import load

    folder = cs336_folder(tmp_path / "student")
    grading = Grading(folder, load("cs336"))
    try:
        loads = grading.outcome("rope.loads")
    finally:
        grading.close()
    assert loads.status == "failed"
    assert f"tests/adapters.py: no function named {ROPE}" in loads.message and "model.py" not in loads.message
    assert "Did you mean" not in loads.message  # the layer part's adapter is its own, not this one misspelt


def test_a_misspelling_in_a_later_file_is_the_one_named(tmp_path):
    write(tmp_path, "def softmax(x):\n    return x\n", "a_helpers.py")
    write(tmp_path, "def atention(q, k, v):\n    return q, q\n", "b_main.py")
    with pytest.raises(LoadError, match=r"b_main\.py: no function named .*Did you mean to name 'atention' 'attention'\?"):
        read(tmp_path, NAMES)


def test_a_folder_where_no_file_defines_it_says_so_and_lists_the_files(tmp_path):
    write(tmp_path, "X = 1\n", "helpers.py")
    (tmp_path / "plots").mkdir()
    write(tmp_path, "def plot(losses):\n    pass\n", "plots/curves.py")
    with pytest.raises(LoadError) as e:
        read(tmp_path, NAMES)
    said = str(e.value)
    assert said.startswith(f"{tmp_path}: no file of the folder defines {NAMES[0]}, ")
    assert said.endswith("(looked at: helpers.py, plots/curves.py)")
