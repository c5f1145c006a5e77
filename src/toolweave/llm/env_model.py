"""A model chosen by `LLM_MODEL_ID`, `LLM_API_KEY`, `LLM_BASE_URL` and `LLM_TIMEOUT`.

Projects built in the HelloAgents style configure their model with these four variables, in the
environment or in a `.env` file in the working directory. `model_from_env` reads the same
settings, so such a project's configuration works unchanged (`toolweave run` and `chat` use it
when neither `--model` nor `TOOLWEAVE_MODEL` is given).

The four values are taken from one place only: the environment when it sets `LLM_MODEL_ID`,
otherwise the `.env` file. They are never mixed, because a `.env` file comes with a folder (a
cloned repository, say): a base URL from such a file must never receive an API key from the
user's own environment.

The working folder's `./.env` is read only once a person trusted it (`toolweave trust .env`,
the same record as a `toolweave.toml`'s: its real path and content hash): a sandboxed command
can write files in the working folder, and a `.env` it wrote must not choose where the next
`toolweave run` sends the conversation (and the user's key). An untrusted `./.env` that names a
model is refused with the fix; an edit after the trust needs a new one. A `.env` path the
caller passes (`dotenv=`) is the caller's choice and read as it is.

With `LLM_BASE_URL`, the model id is a name at that OpenAI-compatible endpoint (vLLM, Ollama,
DeepSeek, Qwen/Bailian...), sent as is (`qwen3:8b` included). Without it, an id with a known
provider prefix (`anthropic:claude-sonnet-4-5`) is a model string, and any other id an OpenAI
model.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

from toolweave.llm.errors import ModelConfigError
from toolweave.llm.model import Model
from toolweave.llm.openai_chat import OpenAIChatModel
from toolweave.llm.presets import known_provider, model_from_string

MODEL_ID_ENV = "LLM_MODEL_ID"
API_KEY_ENV = "LLM_API_KEY"
BASE_URL_ENV = "LLM_BASE_URL"
TIMEOUT_ENV = "LLM_TIMEOUT"
ENV_NAMES = (MODEL_ID_ENV, API_KEY_ENV, BASE_URL_ENV, TIMEOUT_ENV)
DOTENV_NAME = ".env"
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read_dotenv(path: Path) -> dict[str, str]:
    """`KEY=value` lines of a `.env` file (`export`, quotes and `#` comments as shells write
    them); a missing file is empty."""
    return _parse(_content(path))


def _content(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _parse(data: bytes) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in data.decode("utf-8").splitlines():
        match = _LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        key, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].strip()
        values[key] = value
    return values


def env_model_settings(
    environ: Mapping[str, str] | None = None, dotenv: Path | None = None
) -> dict[str, str]:
    """The `LLM_*` settings in force: the environment's when it sets `LLM_MODEL_ID`, else the
    `.env` file's (`dotenv`, default `./.env`); empty when neither names a model."""
    environ = os.environ if environ is None else environ
    if environ.get(MODEL_ID_ENV):
        source: Mapping[str, str] = environ
    elif dotenv is not None:
        source = read_dotenv(dotenv)
    else:
        source = _trusted_dotenv(Path(DOTENV_NAME))
    return {name: source[name] for name in ENV_NAMES if source.get(name)}


def _trusted_dotenv(path: Path) -> dict[str, str]:
    """`./.env`'s values when it names no model or a person trusted it; else refused."""
    from toolweave.storage.trust import is_trusted

    data = _content(path)  # read once: the bytes checked are the bytes used
    values = _parse(data)
    if values.get(MODEL_ID_ENV) and not is_trusted(path, content=data):
        raise ModelConfigError(
            f"./{DOTENV_NAME} sets {MODEL_ID_ENV} but is not trusted (a file in the working "
            "folder may come with a cloned repository or be written by a sandboxed command); "
            f"read it, then run `toolweave trust {DOTENV_NAME}` (an edit needs a new trust), "
            f"or set the {MODEL_ID_ENV} variables in the environment, or pass --model",
            setting=MODEL_ID_ENV,
        )
    return values


def model_from_env(
    environ: Mapping[str, str] | None = None, dotenv: Path | None = None
) -> Model | None:
    """The model the `LLM_*` settings describe, or None when they name none.

    Raises `ModelConfigError` naming the variable for a timeout that is not a positive number
    and for a model string or key that `model_from_string` refuses.
    """
    settings = env_model_settings(environ, dotenv)
    model_id = settings.get(MODEL_ID_ENV)
    if not model_id:
        return None
    timeout = _timeout(settings.get(TIMEOUT_ENV))
    options: dict[str, object] = {} if timeout is None else {"timeout": timeout}
    api_key = settings.get(API_KEY_ENV)
    base_url = settings.get(BASE_URL_ENV)
    if base_url:
        return OpenAIChatModel(
            model_id,
            base_url=base_url,
            api_key=api_key,
            api_key_env=(),
            require_api_key=False,
            max_tokens_field="max_tokens",
            **options,  # type: ignore[arg-type]
        )
    if api_key:
        options["api_key"] = api_key
    if model_id.partition(":")[0].strip().lower() == "openai-compat":
        options["api_key_env"] = ()  # its URL came with these settings: so must its key
    if known_provider(model_id.partition(":")[0]):
        return model_from_string(model_id, **options)
    return model_from_string(f"openai:{model_id}", **options)


def _timeout(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not seconds > 0 or math.isinf(seconds):
        raise ModelConfigError(
            f"{TIMEOUT_ENV}={raw!r} must be a positive number of seconds, e.g. {TIMEOUT_ENV}=60",
            setting=TIMEOUT_ENV,
        )
    return seconds
