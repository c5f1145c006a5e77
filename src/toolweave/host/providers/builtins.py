"""The `builtins` provider: the built-in tools served by `toolweave serve`, safe by default.

`[builtins]` in `toolweave.toml` switches each tool on. Without any setting the host serves the
filesystem tools jailed to `toolweave-workspace` beside `[serve].data_dir` (never inside it),
`time` and `todo_write`; `sql_query` needs a DSN, `fetch` an allow-list or an explicit
`fetch = true`, and the shell `shell = true`, after which every command no allow rule matches
goes through the approval gate (MCP elicitation) or is refused.

```toml
[builtins]
root = "~/work"                # filesystem jail (default: ~/toolweave-workspace, beside data_dir)
filesystem = true
writable = true                # write_file and edit_file
time = true
todo = true
sql_dsn = ""                   # sqlite:///path.db or postgresql://... turns sql_query on
sql_timeout = 5.0
sql_max_rows = 50
sql_max_cell_bytes = 65536     # no SQLite value over this is built (SQLITE_LIMIT_LENGTH)
fetch = false                  # true, or a non-empty allow_domains, turns fetch on
allow_domains = []
fetch_max_html_nodes = 20000   # past it a page is read as plain text, not converted
fetch_max_html_depth = 200     # the same for nesting deeper than this
shell = false
shell_allow = []               # Bash rules that run without asking: "git status", "ls *"
shell_deny = ["rm *"]          # default: toolweave.builtins.shell.DEFAULT_DENY
shell_timeout = 30.0
sandbox = "on"                 # "off": run the shell unsandboxed, every command asks first
network = false                # true: sandboxed commands may use the network (all of it)
sandbox_memory_bytes = 1073741824   # heap per sandboxed process (RLIMIT_DATA)
sandbox_max_processes = 256         # processes per call (RLIMIT_NPROC; not for a root host)
sandbox_tmp_bytes = 268435456       # the private /tmp of one call
sandbox_file_bytes = 1073741824     # largest file a command may write (RLIMIT_FSIZE)
```

The shell runs under bubblewrap (see `toolweave.tools.sandbox` and docs/security.md): the
host read-only but for the jail and a private /tmp, no network unless `network = true`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from toolweave.builtins.fetch import DEFAULT_MAX_HTML_DEPTH, DEFAULT_MAX_HTML_NODES
from toolweave.builtins.shell import shell_rules
from toolweave.builtins.sql import DEFAULT_MAX_CELL_BYTES
from toolweave.host.config import HostConfig
from toolweave.host.providers.skills import SkillsSection
from toolweave.host.sandbox_paths import host_files, private_paths
from toolweave.host.sections import Section
from toolweave.tools.base import Tool
from toolweave.tools.sandbox import SandboxLimits
from toolweave.tools.sandbox_limits import (
    DEFAULT_FILE_BYTES,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TMP_BYTES,
)

DEFAULT_WORKSPACE = "toolweave-workspace"
"""The default jail's folder name, beside `[serve].data_dir` (`~/toolweave-workspace`)."""


class BuiltinsSection(Section):
    """The validated `[builtins]` table (see the module docstring for each key)."""

    root: str = ""
    """The filesystem jail; "" means `toolweave-workspace` beside `[serve].data_dir`."""
    filesystem: bool = True
    writable: bool = True
    time: bool = True
    todo: bool = True
    sql_dsn: str = ""
    sql_timeout: float = Field(5.0, gt=0)
    sql_max_rows: int = Field(50, gt=0)
    sql_max_cell_bytes: int = Field(DEFAULT_MAX_CELL_BYTES, gt=0)
    fetch: bool = False
    allow_domains: list[str] = Field(default_factory=list)
    fetch_max_html_nodes: int = Field(DEFAULT_MAX_HTML_NODES, gt=0)
    fetch_max_html_depth: int = Field(DEFAULT_MAX_HTML_DEPTH, gt=0)
    shell: bool = False
    shell_allow: list[str] = Field(default_factory=list)
    shell_deny: list[str] | None = None
    shell_timeout: float = Field(30.0, gt=0)
    sandbox: Literal["on", "off"] = "on"
    """"off" runs the shell without the OS sandbox, and then every command asks first."""
    network: bool = False
    """Whether sandboxed commands may use the network (all or nothing)."""
    sandbox_memory_bytes: int = Field(DEFAULT_MEMORY_BYTES, gt=0)
    sandbox_max_processes: int = Field(DEFAULT_MAX_PROCESSES, gt=0)
    sandbox_tmp_bytes: int = Field(DEFAULT_TMP_BYTES, gt=0)
    sandbox_file_bytes: int = Field(DEFAULT_FILE_BYTES, gt=0)

    def limits(self) -> SandboxLimits:
        """The shell sandbox's limits, from the `sandbox_*` keys."""
        return SandboxLimits(
            self.sandbox_memory_bytes,
            self.sandbox_max_processes,
            self.sandbox_tmp_bytes,
            self.sandbox_file_bytes,
        )

    @field_validator("shell_allow", "shell_deny")
    @classmethod
    def _rules(cls, patterns: list[str] | None) -> list[str] | None:
        """Checked when the config is read, not when the shell is first listed: a pattern the
        rules parser refuses stops `serve` at start (exit 2), naming the key."""
        from toolweave.governance.rules import Rules

        if patterns is not None:
            Rules(allow=shell_rules(patterns, "entry"), source="[builtins]")
        return patterns

    def root_path(self, data_dir: Path) -> Path:
        """The jail: `root`, else `DEFAULT_WORKSPACE` beside (never inside) the data folder,
        whose memory, knowledge base and query log the sandbox must not reach."""
        return Path(self.root).expanduser() if self.root else data_dir.parent / DEFAULT_WORKSPACE


class BuiltinsProvider:
    """Builds the enabled built-ins once and releases the SQL connection on close."""

    name = "builtins"

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.settings = config.section("builtins", BuiltinsSection)
        self.root = self.settings.root_path(config.data_dir)
        self._closers: list[Any] = []

    def describe(self) -> str:
        s = self.settings
        parts = [
            f"files jailed to {self.root}"
            + (" (write_file and edit_file ask unless allowed)" if s.writable else " (read-only)")
        ]
        parts += [n for n, on in (("time", s.time), ("todo_write", s.todo)) if on]
        parts += [
            n for n, on in (("sql_query", s.sql_dsn), ("fetch", s.fetch or s.allow_domains)) if on
        ]
        if s.shell:
            parts.append("bash (asks unless allowed)")
        return "built-in tools: " + ", ".join(parts)

    async def tools(self) -> list[Tool]:
        from toolweave import builtins

        settings = self.settings
        tools: list[Tool] = []
        if settings.filesystem or settings.shell:
            self.root.mkdir(parents=True, exist_ok=True)
        if settings.filesystem:
            tools += builtins.filesystem_tools(self.root, writable=settings.writable)
        if settings.time:
            tools.append(builtins.time_tool())
        if settings.todo:
            tools.append(builtins.todo_tool())
        if settings.sql_dsn:
            reader = builtins.SQLReader(
                settings.sql_dsn,
                settings.sql_timeout,
                settings.sql_max_rows,
                max_cell_bytes=settings.sql_max_cell_bytes,
            )
            self._closers.append(reader)
            tools += reader.tools()
        if settings.fetch or settings.allow_domains:
            tools.append(
                builtins.fetch_tool(
                    settings.allow_domains or None,
                    max_html_nodes=settings.fetch_max_html_nodes,
                    max_html_depth=settings.fetch_max_html_depth,
                )
            )
        if settings.shell:
            tools.append(
                builtins.shell_tool(
                    self.root,
                    deny=settings.shell_deny,
                    allow=settings.shell_allow,
                    timeout=settings.shell_timeout,
                    sandbox=settings.sandbox,
                    network=settings.network,
                    protected=host_files(self.config, self._skill_roots()),
                    hidden=private_paths(self.config),
                    limits=settings.limits(),
                )
            )
        return tools

    def _skill_roots(self) -> list[Path] | None:
        """The `[skills]` roots: the skill scripts bash must not rewrite."""
        return self.config.section("skills", SkillsSection).root_paths(self.config.source)

    async def close(self) -> None:
        for closer in self._closers:
            await closer.close()
        self._closers.clear()
