"""Saved teams: named groups of subagent members, each with a role prompt.

A team is stored per scope: a session key (one chat's teams) or `GLOBAL_TEAM_SCOPE` (visible to
every session). Lookups try the session's own teams first, then the global ones, so a session may
shadow a global team without changing it for anyone else. Names are what a person types in a chat:
letters (any script, so Chinese names work), digits, `_` and `-`.
"""

from __future__ import annotations

import builtins
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError
from toolweave.storage.sql import Dialect, Program, SQLStore

GLOBAL_TEAM_SCOPE = "global"
MAX_TEAM_MEMBERS = 10
"""Hard cap on members per team (and per `team_run`): no concurrency storms."""
MAX_ROLE_CHARS = 4000
_NAME = re.compile(r"^[^\W_][\w-]{0,63}$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_teams (
    scope TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, members TEXT NOT NULL,
    updated DOUBLE PRECISION NOT NULL, PRIMARY KEY (scope, name)
)
"""


def check_name(kind: str, name: object) -> str:
    """A valid team or member name, or a ValueError that says what is allowed."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ConfigError(
            f"{kind} {name!r} is not a valid name: use 1-64 letters (any language), digits, "
            "'_' or '-', starting with a letter or digit"
        )
    return name


@dataclass(frozen=True, slots=True)
class TeamMember:
    """One member: a name (unique in the team) and the role prompt its subagent runs with."""

    name: str
    role: str

    @classmethod
    def parse(cls, raw: Any, where: str = "members") -> TeamMember:
        if isinstance(raw, TeamMember):
            return raw
        if not isinstance(raw, dict) or set(raw) - {"name", "role"} or "name" not in raw:
            raise ConfigError(f"{where}: each member is an object {{name, role}}, got {raw!r}")
        role = raw.get("role", "")
        if not isinstance(role, str) or len(role) > MAX_ROLE_CHARS:
            raise ConfigError(f"{where}: role must be a string of at most {MAX_ROLE_CHARS} chars")
        return cls(check_name("member", raw["name"]), role)


@dataclass(frozen=True, slots=True)
class Team:
    name: str
    members: tuple[TeamMember, ...]
    description: str = ""
    scope: str = GLOBAL_TEAM_SCOPE

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "scope": self.scope,
            "members": [{"name": m.name, "role": m.role} for m in self.members],
        }


def parse_members(raw: Any, where: str = "members") -> tuple[TeamMember, ...]:
    """Validate a member list: 1 to `MAX_TEAM_MEMBERS` members with distinct names."""
    if not isinstance(raw, list | tuple) or not raw:
        raise ConfigError(f"{where} must be a non-empty list of {{name, role}} objects")
    if len(raw) > MAX_TEAM_MEMBERS:
        raise ConfigError(
            f"{where} has {len(raw)} members; a team has at most {MAX_TEAM_MEMBERS} "
            "(split the work into several teams)"
        )
    members = tuple(TeamMember.parse(item, where) for item in raw)
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: member names must be distinct, got {names}")
    return members


class TeamStore:
    """Teams in an embedded SQLite file (`path`) or a shared Postgres database (`dsn`)."""

    def __init__(self, path: str | Path | None = None, *, dsn: str | None = None) -> None:
        self.store = SQLStore(path, dsn=dsn, schema=_SCHEMA, owner="TeamStore")

    async def save(
        self, name: str, members: Any, *, description: str = "", scope: str = GLOBAL_TEAM_SCOPE
    ) -> Team:
        """Create or replace the team `name` in `scope`."""
        team = Team(check_name("team", name), parse_members(members), description, scope)
        payload = json.dumps([{"name": m.name, "role": m.role} for m in team.members])

        def program(dialect: Dialect) -> Program[None]:
            yield (
                "INSERT INTO toolweave_teams (scope, name, description, members, updated) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET "
                "description = excluded.description, members = excluded.members, "
                "updated = excluded.updated",
                (scope, team.name, description, payload, time.time()),
            )

        await self.store.transact(program)
        return team

    async def get(self, name: str, *, scope: str = GLOBAL_TEAM_SCOPE) -> Team | None:
        """The team `name` as seen from `scope`: its own first, then the global one."""
        check_name("team", name)

        def program(dialect: Dialect) -> Program[Team | None]:
            rows = yield (
                "SELECT scope, name, description, members FROM toolweave_teams "
                "WHERE name = ? AND scope IN (?, ?)",
                (name, scope, GLOBAL_TEAM_SCOPE),
            )
            found = sorted(rows, key=lambda r: r[0] == GLOBAL_TEAM_SCOPE)
            return _team(found[0]) if found else None

        return await self.store.transact(program)

    async def list(self, *, scope: str = GLOBAL_TEAM_SCOPE) -> builtins.list[Team]:
        """Teams visible from `scope`, sorted by name (a session's team hides a global one)."""

        def program(dialect: Dialect) -> Program[builtins.list[Team]]:
            rows = yield (
                "SELECT scope, name, description, members FROM toolweave_teams "
                "WHERE scope IN (?, ?)",
                (scope, GLOBAL_TEAM_SCOPE),
            )
            visible: dict[str, Team] = {}
            for row in sorted(rows, key=lambda r: r[0] != GLOBAL_TEAM_SCOPE):
                visible[row[1]] = _team(row)
            return [visible[n] for n in sorted(visible)]

        return await self.store.transact(program)

    async def delete(self, name: str, *, scope: str = GLOBAL_TEAM_SCOPE) -> bool:
        """Delete the team `name` from `scope` only; returns whether it existed."""
        check_name("team", name)

        def program(dialect: Dialect) -> Program[bool]:
            rows = yield (
                "DELETE FROM toolweave_teams WHERE scope = ? AND name = ? RETURNING name",
                (scope, name),
            )
            return bool(rows)

        return await self.store.transact(program)

    async def close(self) -> None:
        await self.store.close()


def _team(row: tuple[Any, ...]) -> Team:
    scope, name, description, members = row
    parsed = tuple(TeamMember(m["name"], m["role"]) for m in json.loads(members))
    return Team(name, parsed, description, scope)
