"""Typed configuration: `toolweave.toml` and `TOOLWEAVE_<TABLE>__<KEY>` variables validated by
pydantic models, errors naming the key and the file line (or the variable), and a provider's
own table plugged in through `SECTIONS`."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from toolweave.errors import ConfigError
from toolweave.host import SECTIONS, Section, load_host_config, parse_config

CONFIG = """\
# a toolweave.toml
[serve]
name = "工具织机"
providers = ["demo"]
port = 9000

[serve.policy]
denied = [
  "shell",
]
allow_unspecified = true
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolweave.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_and_the_environment(tmp_path: Path) -> None:
    path = _write(tmp_path, CONFIG)
    config = load_host_config(path, env={})
    assert (config.name, config.port, config.policy.denied) == ("工具织机", 9000, ["shell"])
    env = {"TOOLWEAVE_SERVE__PORT": "9100", "TOOLWEAVE_SERVE__POLICY__ALLOWED": '["read"]'}
    config = load_host_config(path, env=env)
    assert config.port == 9100 and config.policy.allowed == ["read"]
    assert config.policy.denied == ["shell"]  # the file's value where no variable is set
    # Variables of other features (TOOLWEAVE_MODEL...) have no `__` and are not config keys.
    assert load_host_config(path, env={"TOOLWEAVE_MODEL": "openai:x"}).port == 9000


@pytest.mark.parametrize(
    ("replace", "by", "expected"),
    [
        ("port = 9000", "prot = 9000", r"toolweave.toml:5: \[serve\].prot is not a known key"),
        (
            "port = 9000",
            'port = "9000"',
            r"toolweave.toml:5: \[serve\].port: Input should be a valid integer",
        ),
        (
            "port = 9000",
            "port = 70000",
            r"toolweave.toml:5: \[serve\].port: Input should be less than or equal to 65535",
        ),
        (
            '  "shell",',
            "  3,",
            r"toolweave.toml:8: \[serve.policy\].denied\[0\]: Input should be a valid string",
        ),
        (
            "allow_unspecified = true",
            "allow_unspecified = 1",
            r"toolweave.toml:11: \[serve.policy\].allow_unspecified",
        ),
        (
            "[serve.policy]",
            "[serve.polcy]",
            r"toolweave.toml:7: \[serve\].polcy is not a known key; the keys of \[serve\] are "
            "allowed_origins",
        ),
        (
            'name = "工具织机"',
            'name = "工具织机"\ntransport = "tcp"',
            r"toolweave.toml:4: \[serve\].transport: Input should be 'stdio' or 'http'",
        ),
    ],
)
def test_errors_name_the_key_and_the_line(
    tmp_path: Path, replace: str, by: str, expected: str
) -> None:
    path = _write(tmp_path, CONFIG.replace(replace, by))
    with pytest.raises(ConfigError, match=expected) as caught:
        load_host_config(path, env={})
    assert str(caught.value).startswith(str(path))


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path, CONFIG.replace("port = 9000", 'port = "x"\npath = "mcp"'))
    with pytest.raises(ConfigError) as caught:
        load_host_config(path, env={})
    lines = str(caught.value).splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"{path}:5", f"{path}:6"]
    assert "must start with '/', e.g. '/mcp'" in lines[1]


def test_an_unknown_table_lists_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, CONFIG + "\n[skils]\nroots = []\n")
    with pytest.raises(ConfigError, match=r"toolweave.toml:13: \[skils\] is not a known table"):
        load_host_config(path, env={})


def test_environment_errors_name_the_variable(tmp_path: Path) -> None:
    path = _write(tmp_path, CONFIG)
    with pytest.raises(
        ConfigError, match=r"environment variable TOOLWEAVE_SERVE__PORT: \[serve\].port"
    ):
        load_host_config(path, env={"TOOLWEAVE_SERVE__PORT": "eighty"})
    with pytest.raises(ConfigError, match="environment variable TOOLWEAVE_SERVE__PROT"):
        load_host_config(path, env={"TOOLWEAVE_SERVE__PROT": "1"})


class NotesSection(Section):
    """A provider's table, as a provider would define it."""

    folder: str = "notes"
    max_notes: int = Field(1000, gt=0)


def test_a_provider_plugs_in_its_own_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SECTIONS, "notes", f"{__name__}:NotesSection")
    path = _write(tmp_path, CONFIG + '\n[notes]\nfolder = "笔记"\n')
    config = load_host_config(path, env={"TOOLWEAVE_NOTES__MAX_NOTES": "5"})
    notes = config.section("notes", NotesSection)
    assert (notes.folder, notes.max_notes) == ("笔记", 5)
    assert (
        load_host_config(_write(tmp_path, CONFIG), env={}).section("notes", NotesSection).max_notes
        == 1000
    )
    path = _write(tmp_path, CONFIG + "\n[notes]\nmax_notes = 0\nfoldr = 'x'\n")
    with pytest.raises(ConfigError) as caught:
        load_host_config(path, env={})
    text = str(caught.value)
    assert f"{path}:14: [notes].max_notes: Input should be greater than 0" in text
    assert (
        f"{path}:15: [notes].foldr is not a known key; the keys of [notes] are folder, max_notes"
        in text
    )


def test_the_line_scanner_skips_multiline_values_and_reads_dotted_and_quoted_keys() -> None:
    from toolweave.host._toml_lines import key_lines, line_of

    text = """\
title = '''
port = 1
'''
[serve]
providers = [
  "demo",
  "x = 2",
]
"policy".denied = []
serve_inline = { a = 1 }

[[mcpServers.files.extra]]
'名字' = "文件"
"""
    lines = key_lines(text)
    assert ("port",) not in lines  # inside a multi-line string
    assert lines[("serve",)] == 4 and lines[("serve", "providers")] == 5
    assert ("serve", "x") not in lines  # inside a multi-line array
    assert lines[("serve", "policy", "denied")] == 9
    assert lines[("mcpServers", "files", "extra", "名字")] == 13
    assert line_of(lines, ("serve", "policy", "denied", 0)) == 9
    assert line_of(lines, ("serve", "serve_inline", "a")) == 10  # the nearest spelled-out key
    assert line_of(lines, ("absent",)) is None


def test_every_problem_in_the_file_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "toolweave.toml"
    path.write_text('[serve]\nprot = 1\nport = "80"\n\n[skils]\nroots = []\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_host_config(path, env={})
    lines = str(caught.value).splitlines()
    assert len(lines) == 3, lines
    assert any("[skils] is not a known table" in line for line in lines)
    assert any(":3: [serve].port: Input should be a valid integer" in line for line in lines)
    assert any(":2: [serve].prot is not a known key" in line for line in lines)


async def test_the_memory_table_configures_the_served_store(tmp_path: Path) -> None:
    from toolweave.host import ToolHost
    from toolweave.host.providers.memory import MemoryProvider

    path = tmp_path / "toolweave.toml"
    path.write_text(
        f'[serve]\nproviders = ["memory"]\ndata_dir = "{tmp_path}"\n\n'
        '[memory]\nembedder = "hash"\n',
        encoding="utf-8",
    )
    host = ToolHost(load_host_config(path, env={}))
    provider = host.providers[0]
    assert isinstance(provider, MemoryProvider) and provider.settings.embedder == "hash"
    (tool,) = await provider.tools()
    await host.close()
    assert tool.name == "memory"
    with pytest.raises(ConfigError, match=r"\[memory\].embeder is not a known key"):
        parse_config({"memory": {"embeder": "hash"}})
