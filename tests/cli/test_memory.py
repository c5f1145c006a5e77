"""`toolweave memory` reports the embedder a store was made with, whatever `--embedder` says,
and says when the given one differs; memories are shown as written (brackets included); a
failing embedder is retried as `--embed-attempts/--embed-backoff/--embed-recheck` say."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.outage_embedder import Embeddings, Endpoint, endpoint, spec
from toolweave.cli import app

__all__ = ["endpoint"]  # the fixture


def memory(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["memory", "--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def test_stats_reports_the_store_s_embedder(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    code, _, err = memory(db, "add", "北京的天气很好 [note]")  # the default: WordLlama
    assert code == 0, err
    code, out, err = memory(db, "--embedder", "hash", "stats")
    assert code == 0
    assert out.splitlines()[-1] == "total       1  (SQLiteTextIndex, wordllama:256)"
    assert "hash:1024" not in out
    (warning,) = err.strip().splitlines()
    assert warning.startswith("warning: --embedder hash makes hash:1024 vectors")
    assert "made with wordllama:256" in warning and "drop --embedder" in warning
    code, out, _ = memory(db, "--embedder", "hash", "stats", "--json")
    numbers = json.loads(out)
    assert (numbers["embedder"], numbers["dim"], numbers["opened_with"]) == (
        "wordllama:256", 256, "hash:1024",
    )  # fmt: skip
    code, out, err = memory(db, "stats")
    assert code == 0 and err == "" and "wordllama:256" in out


def test_search_with_another_embedder_is_one_line_naming_the_flag(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert memory(db, "add", "北京的天气很好 [note]")[0] == 0
    code, _, err = memory(db, "--embedder", "hash", "search", "天气")
    (line,) = err.strip().splitlines()
    assert code == 2 and "built with embedder 'wordllama:256'" in line
    assert "drop --embedder" in line
    code, out, _ = memory(db, "search", "天气")
    assert code == 0 and "北京的天气很好 [note]" in out


def test_a_new_store_reports_the_embedder_it_is_opened_with(tmp_path: Path) -> None:
    code, out, err = memory(tmp_path / "new.db", "--embedder", "hash:64", "stats", "--json")
    numbers = json.loads(out)
    assert code == 0 and err == ""
    assert (numbers["embedder"], numbers["dim"], numbers["opened_with"]) == (
        "hash:64", 64, "hash:64",
    )  # fmt: skip


def test_adding_stored_text_again_says_so_and_keeps_the_new_importance_and_meta(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memory.db"
    code, first, _ = memory(db, "--embedder", "hash", "add", "喜欢绿茶 green tea")
    assert code == 0
    code, again, err = memory(
        db, "--embedder", "hash", "add", "喜欢绿茶 green tea", "--importance", "0.9",
        "--meta", "source=chat",
    )  # fmt: skip
    assert code == 0 and again.strip() == first.strip()
    assert "already stored" in err and "importance and metadata updated" in err
    code, out, _ = memory(db, "--embedder", "hash", "search", "绿茶", "--json")
    (row,) = json.loads(out)
    assert row["importance"] == 0.9 and row["metadata"]["source"] == "chat"


def test_import_names_a_bad_item_by_its_line_like_a_json_error(tmp_path: Path) -> None:
    source = tmp_path / "memories.jsonl"
    lines = ['{"content": "第一条"}', "", '{"content": "second", "importance": 7}']
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = memory(tmp_path / "m.db", "--embedder", "hash", "import", str(source))
    assert code == 2 and f"{source}:3: " in err and "importance" in err
    source.write_text('{"content": "ok"}\n{not json\n', encoding="utf-8")
    code, _, err = memory(tmp_path / "m.db", "--embedder", "hash", "import", str(source))
    assert code == 2 and f"{source}:2: not JSON" in err


def test_options_say_what_they_take() -> None:
    def help_of(*command: str) -> str:
        result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        return " ".join(result.stdout.split())

    assert "e5" in help_of("memory") and "openai-compat" in help_of("memory")
    forget = help_of("memory", "forget")
    assert "importance_based, time_based, capacity_based" in forget
    assert "forget memories below this importance" in forget and "older than" in forget
    assert "Most memories to show" in help_of("memory", "search")
    assert "working, episodic, semantic, perceptual" in help_of("memory", "add")


def test_the_embed_retry_options_reach_the_store_and_are_checked(
    tmp_path: Path, endpoint: Endpoint
) -> None:
    db, down = tmp_path / "m.db", spec(endpoint)
    code, _, err = memory(db, "--embedder", down, "add", "每天早上喝乌龙茶")  # it answers
    assert code == 0, err
    Embeddings.fail_next = 10**6  # now every request gets 503
    slow = ["--embed-attempts", "1", "--embed-recheck", "4321"]
    code, out, err = memory(db, "--embedder", down, *slow, "search", "乌龙茶")
    assert code == 0 and "每天早上喝乌龙茶" in out  # by keywords
    assert "keywords only" in err and "tried again after 4321 s" in err
    calls = []
    for attempts in ("1", "3"):
        before = Embeddings.calls
        eager = ["--embed-attempts", attempts, "--embed-backoff", "0", "--embed-recheck", "0"]
        code, out, err = memory(db, "--embedder", down, *eager, "search", "乌龙茶")
        assert code == 0 and "每天早上喝乌龙茶" in out and "tried again after 0 s" in err
        calls.append(Embeddings.calls - before)
    assert calls[1] - calls[0] == 2  # the query's embedding tried 3 times instead of once
    for option, value, bound in (
        ("--embed-attempts", "0", "greater than or equal to 1"),
        ("--embed-backoff", "-1", "greater than or equal to 0"),
        ("--embed-recheck", "-0.5", "greater than or equal to 0"),
    ):
        code, _, err = memory(db, option, value, "stats")
        flat = " ".join(part.strip(" │") for part in err.splitlines())  # Rich's box, unwrapped
        assert code == 2 and f"Invalid value for '{option}'" in flat and bound in flat, flat
