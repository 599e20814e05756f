# BUG (public folder): incfly/assignment1-basics @ 44054a77500aac617c10c23161cddd1a9924e40a,
# cs336_basics/model/__init__.py, copied with nothing changed (MIT, the repository's LICENSE, Copyright 2025 Stanford
# University). The folder keeps only what the attention adapters import.
from cs336_basics.model.embedding import Embedding
from cs336_basics.model.attention import MultiheadSelfAttention
from cs336_basics.model.block import Block, TransformerBlock
from cs336_basics.model.linear import Linear
from cs336_basics.model.model import TransformerLM
from cs336_basics.model.prenorm import RMSNorm
from cs336_basics.model.rope import RoPE
from cs336_basics.model.softmax import cross_entropy, scaled_dot_product_attention, softmax
from cs336_basics.model.swiglu import SwiGLU

__all__ = [
    "Embedding",
    "Block",
    "Linear",
    "MultiheadSelfAttention",
    "RMSNorm",
    "RoPE",
    "SwiGLU",
    "TransformerLM",
    "TransformerBlock",
    "cross_entropy",
    "scaled_dot_product_attention",
    "softmax",
]
