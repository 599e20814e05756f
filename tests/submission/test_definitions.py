"""Definitions-only loading (grader/definitions.py): what is kept, what is dropped, and what the report says."""

import re

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_notebook

from grader.exercises import EXERCISES
from grader.submission.definitions import keep_definitions
from grader.submission.loader import read
from grader.submission.reading import Reading
from grader.submission.source import LoadError, Source

NAMES = EXERCISES["chapter5"].entry_points


def keep(code, filename="/tmp/homework.py"):
    return keep_definitions(Source(code, filename, "homework"))


def run(source):
    namespace = {}
    exec(compile(source.code, source.filename, "exec"), namespace)
    return namespace


def test_constants_the_function_reads_are_kept_transitively_even_after_it():
    source = keep(
        "import torch\n"
        "def attention(q, k, v):\n    return q * SCALE, q\n"
        "out, weights = attention(1, 2, 3)  # a local name of the function, not a global it reads\n"
        "BASE = 4.0\n"
        "SCALE = BASE / 2\n"
        "UNUSED = 1\n"
    )
    assert "SCALE = BASE / 2" in source.code and "BASE = 4.0" in source.code
    assert "UNUSED" not in source.code and "out, weights" not in source.code
    assert run(source)["attention"](2, 0, 0) == (4.0, 2)


def test_top_level_code_is_dropped_and_listed_with_its_line():
    source = keep(
        '"""Homework."""\n'
        "import torch\n"
        "def attention(q, k, v):\n    return q, q\n"
        "x = torch.randn(2, 3)\nprint(attention(x, x, x))\nfor step in range(10 ** 9):\n    pass\n"
        "attention = torch.compile(attention)\n"
        "if __name__ == '__main__':\n    SCALE = 2\n"
    )
    assert source.skipped == ("line 5: x = torch.randn(2, 3) (+4 more statements)",)  # up to the __main__ block
    assert source.notes[0].startswith("only definitions ran")
    assert set(run(source)) >= {"torch", "attention"}


def test_kept_code_stays_on_its_lines():
    code = "import math\nprint('hi'); X = 2\nwhile True:\n    pass\ndef attention(q, k, v):\n    return q * X, q\n"
    source = keep(code)
    lines = source.code.split("\n")
    assert lines[1] == "X = 2" and lines[4] == "def attention(q, k, v):" and len(lines) == len(code.split("\n"))


def test_aliases_and_blocks_that_bind_what_the_function_needs():
    source = keep(
        "try:\n    from einops import rearrange\nexcept ImportError:\n    rearrange = None\n"
        "import torch\n"
        "if torch.cuda.is_available():\n    DEVICE = 'cuda'\nelse:\n    DEVICE = 'cpu'\n"
        "def my_attention(q, k, v):\n    return DEVICE, rearrange\n"
        "causal_attention = my_attention\n"
        "shown = torch.zeros(2)\n"
    )
    assert run(source)["causal_attention"](0, 0, 0)[0] == "cpu"
    assert source.skipped == ("line 13: shown = torch.zeros(2)",)


def test_missing_package_is_dropped_with_a_note_and_the_rest_of_the_import_kept():
    source = keep("import torch, no_such_package_for_grading\nfrom no_such_package_for_grading.sub import x\n")
    assert source.code.split("\n")[0] == "import torch"
    assert source.skipped == ("line 2: from no_such_package_for_grading.sub import x (not installed on the grading machine)",)
    assert source.notes == ("import of 'no_such_package_for_grading' skipped: not installed on the grading machine",)


def test_a_helper_module_beside_the_file_counts_as_installed(tmp_path):
    (tmp_path / "mask_utils.py").write_text("def causal_mask(t):\n    return t\n")
    source = keep("from mask_utils import causal_mask\nfrom . import sibling\n", str(tmp_path / "main.py"))
    assert source.skipped == () and "from mask_utils import causal_mask" in source.code


def test_defs_only_for_a_py_file_through_the_loader(tmp_path):
    path = tmp_path / "homework.py"
    path.write_text("import torch\ndef attention(q, k, v):\n    return q, q\nwhile True:\n    pass\n")
    source, entry = read(path, NAMES, reading=Reading(defs_only=True))
    assert entry == "attention" and "while" not in source.code and source.skipped == ("line 4: while True:",)
    assert read(path, NAMES)[0].code == path.read_text()  # the default still runs the module as it is


def test_syntax_error_keeps_its_line(tmp_path):
    path = tmp_path / "homework.py"
    path.write_text("import torch\nfor i in range(3):\n    print(i\n")
    with pytest.raises(LoadError, match=r"syntax error in .*homework\.py, line 3"):
        read(path, NAMES, reading=Reading(defs_only=True))


def test_defs_only_reaches_the_commands(tmp_path, capsys):
    """`check --defs-only` grades the function of a script whose top level would run for ever."""
    from conftest import CH5_DIR

    from grader.frontends.cli import main

    script = tmp_path / "script.py"
    script.write_text((CH5_DIR / "correct_basic.py").read_text() + "\nwhile True:\n    pass\n")
    assert main(["check", str(script), "--defs-only"]) == 0
    assert "100/100" in capsys.readouterr().out


# -- only what grading reaches from the entry point --------------------------------------------------------------
LAYER_NAMES = EXERCISES["mha_module"].entry_points

LECTURE = """\
import torch
import torch.nn as nn
from torch.nn import functional as F

batch_size = 4
block_size = 8
n_embd = 16
dropout = 0.0
device = 'cpu'

with open('input.txt', 'r', encoding='utf-8') as f:
    text = f.read()
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = { ch:i for i,ch in enumerate(chars) }
encode = lambda s: [stoi[c] for c in s]
data = torch.tensor(encode(text), dtype=torch.long)
train_data = data[:100]

def get_batch(split):
    ix = torch.randint(len(train_data) - block_size, (batch_size,))
    return torch.stack([train_data[i:i+block_size] for i in ix]).to(device)

@torch.no_grad()
def estimate_loss():
    return model(get_batch('train'))

class Head(nn.Module):
    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        T = x.shape[1]
        return self.key(x).masked_fill(self.tril[:T, :1] == 0, 0.0)

class MultiHeadAttention(nn.Module):
    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.proj(torch.cat([h(x) for h in self.heads], dim=-1)))

class GPTLanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.sa = MultiHeadAttention(2, n_embd // 2)

    def forward(self, idx):
        return self.sa(self.token_embedding_table(idx))

model = GPTLanguageModel()
for iter in range(5000):
    estimate_loss()
"""


def assert_lecture_layer_only(source, tmp_path, monkeypatch):
    """Karpathy's gpt.py, in short: MultiHeadAttention reaches Head and n_embd, block_size, dropout; only get_batch
    (through train_data) needs the text read from input.txt, and only GPTLanguageModel vocab_size."""
    for gone in ("open(", "text", "vocab_size =", "train_data =", "batch_size =", "device =", "model =", "for iter"):
        assert gone not in source.code, gone
    for kept in ("block_size = 8", "n_embd = 16", "dropout = 0.0", "class Head", "def get_batch", "def estimate_loss",
                 "class GPTLanguageModel"):  # defining a function or class runs no body
        assert kept in source.code, kept
    assert source.notes[0].startswith("only definitions ran: imports, functions, classes and the values "
                                      "MultiHeadAttention uses")
    monkeypatch.chdir(tmp_path)  # no input.txt here
    layer = run(source)["MultiHeadAttention"](2, 8)
    assert layer(torch.randn(1, 3, 16)).shape == (1, 3, 16)


def test_karpathys_lecture_file_runs_only_what_its_layer_reaches(tmp_path, monkeypatch):
    """The audit's 0/100: the `with open('input.txt')` block was kept because get_batch reads train_data."""
    path = tmp_path / "gpt.py"
    path.write_text(LECTURE)
    source, entry = read(path, LAYER_NAMES, reading=Reading(defs_only=True))
    assert entry == "MultiHeadAttention"
    assert_lecture_layer_only(source, tmp_path, monkeypatch)
    assert source.skipped[:2] == ("line 5: batch_size = 4", "line 9: device = 'cpu' (+7 more statements)")
    lines = source.code.split("\n")
    assert lines[5] == "block_size = 8" and lines[27] == "class Head(nn.Module):"  # still on their own lines


def test_the_same_cells_in_a_notebook(tmp_path, monkeypatch):
    """A notebook is read definitions-only by default: the lecture's code in cells (split where a blank line is
    followed by top-level code)."""
    cells = re.split(r"\n\n(?=\S)", LECTURE)
    path = tmp_path / "gpt.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(c) for c in cells]), path)
    source, entry = read(path, LAYER_NAMES)
    assert entry == "MultiHeadAttention"
    assert_lecture_layer_only(source, tmp_path, monkeypatch)
    assert "cell 3: with open('input.txt', 'r', encoding='utf-8') as f: (+6 more statements)" in source.skipped


def test_a_folder_reads_its_chosen_file_the_same_way(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text("from gpt import *\nmodel = GPTLanguageModel()\n")
    (tmp_path / "sub" / "gpt.py").write_text(LECTURE)
    source, entry = read(tmp_path / "sub", LAYER_NAMES, reading=Reading(defs_only=True))
    assert entry == "MultiHeadAttention" and source.filename.endswith("gpt.py")
    assert_lecture_layer_only(source, tmp_path, monkeypatch)


def test_what_defining_the_reached_code_evaluates_is_kept_and_an_unreached_definition_that_needs_more_goes():
    source = keep_definitions(Source(
        "import functools\n"
        "import torch\n"
        "Base = type('Base', (torch.nn.Module,), {})\n"  # the layer's base class
        "SIZE = 3\n"  # a default value of a function it calls
        "CACHE = 8\n"  # its decorator's argument
        "data = open('input.txt').read()\n"  # only what the layer never reaches needs it
        "def scaled(x, factor=SIZE):\n    return x * factor\n"
        "@functools.lru_cache(maxsize=CACHE)\n"
        "def mask(t):\n    return torch.ones(t, t).tril()\n"
        "def batches(text=data):\n    return text\n"  # defining it would read data: left out, listed
        "def unused():\n    return data\n"  # defining it reads nothing: it stays
        "class Attention(Base):\n    def forward(self, x):\n        return scaled(x) @ mask(x.shape[-1])\n",
        "/tmp/layer.py", "layer"), LAYER_NAMES)
    assert "open(" not in source.code and "def batches" not in source.code and "def unused" in source.code
    assert source.skipped == (
        "line 6: data = open('input.txt').read()",
        "line 12: def batches(text=data): (not needed by Attention, and defining it needs data, which did not run)",
    )
    assert run(source)["Attention"]()(torch.ones(2, 2)).tolist() == [[6.0, 3.0], [6.0, 3.0]]


def test_a_global_one_method_reads_and_another_shadows_is_kept():
    """Python's own scoping (symtable): WIDTH is forward's local, and still the global __init__ reads."""
    code = ("import torch\nWIDTH = 4\n"
            "class Attention(torch.nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.w = torch.nn.Linear(WIDTH, WIDTH)\n"
            "    def forward(self, x):\n        WIDTH = x.shape[-1]\n        return self.w(x)[..., :WIDTH]\n")
    assert run(keep(code))["Attention"]().w.in_features == 4
    assert run(keep_definitions(Source(code, "/tmp/layer.py", "layer"), LAYER_NAMES))["Attention"]().w.in_features == 4


def test_without_an_entry_point_every_definition_counts_as_reached():
    """Several nn.Module classes and none of the accepted names: "*" cannot choose, so everything any definition
    reads is kept, as before entry points were looked at."""
    source = keep(LECTURE.replace("MultiHeadAttention", "Heads"))
    assert "open(" in source.code and "vocab_size =" in source.code and "batch_size =" in source.code
    assert keep_definitions(Source(LECTURE.replace("MultiHeadAttention", "Heads"), "/tmp/gpt.py", "gpt"),
                            LAYER_NAMES).code == source.code
