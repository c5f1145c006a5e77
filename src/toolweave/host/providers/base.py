"""Capability providers: the seam through which `toolweave serve` learns what to expose.

A provider contributes `Tool`s (and releases what it holds on `close`). The host knows
providers by name through `PROVIDERS`, a map to `"module:attribute"` factories imported only
when enabled in `[serve].providers`, so memory, the knowledge base, notes, skills and the
built-ins each add one line here when their packages land, and none of them costs start-up time
unless switched on.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

from toolweave._extras import missing
from toolweave.errors import ConfigError, MissingDependency
from toolweave.host.config import HostConfig
from toolweave.tools.base import Tool


@runtime_checkable
class CapabilityProvider(Protocol):
    """Something that contributes tools to the host."""

    name: str

    async def tools(self) -> list[Tool]:
        """The tools to publish; called once, on the first tools/list or tools/call."""
        ...

    async def close(self) -> None: ...


def describe(provider: CapabilityProvider) -> str:
    """What a provider serves and where its data lives, for the banner (its `describe()`)."""
    method = getattr(provider, "describe", None)
    return str(method()) if method is not None else provider.name


#: Provider name -> "module:factory". A factory takes the `HostConfig` and returns a provider.
PROVIDERS: dict[str, str] = {
    "demo": "toolweave.host.providers.demo:DemoProvider",
    "builtins": "toolweave.host.providers.builtins:BuiltinsProvider",
    "mcp": "toolweave.host.providers.gateway:GatewayProvider",
    "memory": "toolweave.host.providers.memory:MemoryProvider",
    "skills": "toolweave.host.providers.skills:SkillsProvider",
    "kb": "toolweave.host.providers.kb:KBProvider",
    "notes": "toolweave.host.providers.kb:NotesProvider",
}


PROVIDER_EXTRAS: dict[str, str] = {"memory": "memory", "kb": "kb", "notes": "memory"}
"""The optional extra (see `toolweave._extras`) a provider needs beyond the server's own."""


def provider_unavailable(name: str) -> MissingDependency | None:
    """Why the provider `name` cannot run here (an extra is not installed), or None."""
    extra = PROVIDER_EXTRAS.get(name)
    module = missing(extra) if extra is not None else None
    if extra is None or module is None:
        return None
    return MissingDependency(f"the {name!r} provider", module, extra)


def provider_factory(name: str) -> Any:
    """The factory (usually the class) registered as `name`, imported."""
    target = PROVIDERS.get(name)
    if target is None:
        available = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"[serve].providers: unknown provider {name!r}; available: {available}")
    unavailable = provider_unavailable(name)
    if unavailable is not None:
        raise unavailable
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def load_provider(name: str, config: HostConfig) -> CapabilityProvider:
    """Instantiate the provider registered as `name`."""
    provider = provider_factory(name)(config)
    if not isinstance(provider, CapabilityProvider):
        raise TypeError(
            f"provider {name!r} ({PROVIDERS[name]}) does not implement CapabilityProvider"
        )
    return provider


def damaged_provider(name: str, config: HostConfig) -> str | None:
    """One line saying why the provider `name` is not served when a store file it declares
    (`store_files(config)`) is damaged, else None."""
    from toolweave.host.stores import damaged_line, damaged_store

    store_files = getattr(provider_factory(name), "store_files", None)
    for path in store_files(config) if store_files is not None else ():
        why = damaged_store(path)
        if why is not None:
            return damaged_line(f"{name} not served", path, why)
    return None
