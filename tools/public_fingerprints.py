"""Build grader/insight/public.json: the fingerprints of well-known public attention implementations, and no code.

    python tools/public_fingerprints.py SOURCES_DIR

SOURCES_DIR holds each file below at OWNER/REPO/PATH, checked out at the commit named (`git -C REPO show
COMMIT:PATH`), and the course texts at course/NAME. The PyTorch docs' code is read from the installed torch's
docstring. Run it again after changing insight.tokens or insight.winnow (tests/insight say when).
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.insight import corpus  # noqa: E402

GITHUB = "https://github.com/{repo}/blob/{commit}/{path}"
# (name, repo, commit, path, the definitions taken: "Class", "function" or "Class.method")
REPOSITORIES = [
    ("karpathy/nanoGPT", "karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291", "model.py",
     ["CausalSelfAttention"]),
    ("karpathy/minGPT", "karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26", "mingpt/model.py",
     ["CausalSelfAttention"]),
    ("Karpathy's GPT lecture (ng-video-lecture)", "karpathy/ng-video-lecture",
     "52201428ed7b46804849dea0b3ccf0de9df1a5c3", "gpt.py", ["Head", "MultiHeadAttention"]),
    ("HF transformers GPT-2", "huggingface/transformers", "0010f60284ab4b9d14b7df9c6525b1a2ad44e640",
     "src/transformers/models/gpt2/modeling_gpt2.py",
     ["GPT2Attention.__init__", "GPT2Attention._attn", "GPT2Attention._split_heads", "GPT2Attention._merge_heads",
      "GPT2Attention.forward"]),
    ("Raschka, LLMs from scratch (ch. 3)", "rasbt/LLMs-from-scratch", "28c65cdfbc3338e2e040016eea4b7fdf556e4d57",
     "pkg/llms_from_scratch/ch03.py",
     ["SelfAttention_v1", "SelfAttention_v2", "CausalAttention", "MultiHeadAttention"]),
    ("d2l (Dive into Deep Learning)", "d2l-ai/d2l-en", "23d7a5aecceee57d1292c56e90cce307f183bb0a", "d2l/torch.py",
     ["masked_softmax", "DotProductAttention", "MultiHeadAttention"]),
    ("The Annotated Transformer", "harvardnlp/annotated-transformer", "debc9fd747bb2123160a98046ad1c2d4da44a567",
     "the_annotated_transformer.py", ["subsequent_mask", "attention", "MultiHeadedAttention"]),
]
# (name, file under course/, first line, last line of its code)
COURSE = [
    ("course text, chapter 5", "000_e38d55272b5c808e.txt", 69, 77, "section 5, the minimal implementation"),
    ("course text, masked self-attention", "001_6994b3b22bf94295.txt", 140, 191, "the Python interface"),
]
PYTORCH_DOCS = "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html"


def definitions(code: str, names: list[str]) -> str:
    """The source of the named top-level definitions ("Class.method" for one method), in the file's order, after
    the file's imports (a copy's `F.softmax` is the author's alias only where `import ... as F` is seen)."""
    tree = ast.parse(code)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    found = ["\n".join(ast.get_source_segment(code, n) for n in imports)]
    for node in tree.body:
        for name in names:
            owner, _, method = name.partition(".")
            if getattr(node, "name", None) != owner:
                continue
            parts = [node] if not method else [m for m in node.body if getattr(m, "name", None) == method]
            found += [textwrap.dedent(ast.get_source_segment(code, p, padded=True)) for p in parts]
    missing = [n for n in names if not any(f"def {n.rpartition('.')[2]}(" in f or f"class {n}" in f for f in found[1:])]
    if missing:
        sys.exit(f"public_fingerprints: {', '.join(missing)} not found")
    return "\n\n".join(found) + "\n"


def pytorch_docs() -> tuple[str, str]:
    import torch
    import torch.nn.functional as F

    doc = F.scaled_dot_product_attention.__doc__
    start = doc.index("def scaled_dot_product_attention")
    end = doc.index("return attn_weight @ value", start) + len("return attn_weight @ value")
    line_start = doc.rindex("\n", 0, start) + 1
    return textwrap.dedent(doc[line_start:end]) + "\n", torch.__version__.split("+")[0]


def main(folder: Path) -> None:
    sources = []
    for name, repo, commit, path, names in REPOSITORIES:
        code = (folder / repo / path).read_text(encoding="utf-8")
        url = GITHUB.format(repo=repo, commit=commit, path=path)
        sources.append(corpus.entry(name, f"{path}: {', '.join(names)}", url, definitions(code, names)))
    for name, file, first, last, what in COURSE:
        lines = (folder / "course" / file).read_text(encoding="utf-8").splitlines()[first - 1:last]
        sources.append(corpus.entry(name, what, "", "\n".join(lines).replace("\u00a0", " ") + "\n"))
    code, version = pytorch_docs()
    sources.append(corpus.entry("PyTorch docs", f"scaled_dot_product_attention's equivalent code (torch {version})",
                                PYTORCH_DOCS, code))
    data = {"scheme": corpus.scheme(), "sources": sorted(sources, key=lambda s: s["name"])}
    out = ROOT / "grader" / "insight" / corpus.PUBLIC
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{out}: {len(sources)} sources, {sum(len(s['kgrams'].split()) for s in sources)} k-gram hashes")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
