"""The public tool-retrieval sets of `tool_search.py`, read from the files of their fetched
repositories (never committed): each becomes a catalog of tools (name, description, JSON Schema
parameters, as the set describes them) and queries labelled with the tools that serve them.

- MetaTool (`load_metatool`; Huang et al., ICLR 2024; github.com/HowieHwong/MetaTool, MIT):
  199 ChatGPT plugins in their own words (`dataset/plugin_des.json`, no parameters: each gets
  one `query` string) and 20,614 user queries, one tool each (`dataset/data/all_clean_data.csv`).
- Seal-Tools (`load_seal_tools`; Wu et al., NLPCC 2024; github.com/fairyshine/Seal-Tools,
  Apache-2.0): 4,076 self-instructed API tools with parameters (`Seal-Tools_Dataset/tool.jsonl`)
  and the 1,354 queries of its two test splits (`test_in_domain.jsonl`,
  `test_out_domain.jsonl`), each labelled with the one or more tools its answer calls.
- ACEBench (`load_acebench`; Chen et al., 2025; github.com/chenchen0103/ACEBench): a Chinese and
  an English half written separately (not translations). The single-turn "normal" files
  (`data_all/data_zh/data_normal_*.json`, without the multi-turn ones) give 600 conversations
  per language; the query is the user's turns, the labels the functions of its
  `possible_answer` (a parallel call's `name_1`, `name_2` are `name`). The catalog is every
  function offered by any item of those files (1,455 Chinese-described, 1,649 English), so a
  query's tool competes with the near-duplicates the set offers beside it (`similar_api`).
- ToolBench's test queries as StableToolBench keeps them (`load_stabletoolbench`; Qin et al.,
  ICLR 2024, and Guo et al., 2024; github.com/THUNLP-MT/StableToolBench, Apache-2.0: the six
  files of `solvable_queries/test_instruction/`, G1 single-tool, G2 intra-category and G3
  intra-collection multi-tool requests): 765 queries, each labelled with its `relevant APIs`;
  the catalog is every RapidAPI endpoint any query offers (2,479; named `tool__api`, described
  by the tool's name and category and the endpoint's own description, often empty, with its
  parameters). Harder than the others: BM25 finds well under 0.9 of the labelled endpoints.
- The real-server catalog (`load_mcp_catalog`): the tools of the MCP servers the tests install
  (server-everything, server-filesystem, server-memory; their own descriptions, listed through
  `MCPManager` as `server__tool`), padded with the real MCP servers' tools LiveMCPTool collected
  (LiveMCPBench, Mo et al., 2025; github.com/icip-cas/LiveMCPBench, Apache-2.0:
  `tools/LiveMCPTool/tools.json`, 70 servers, 527 tools; its copies of the filesystem and
  memory servers left out), server by server until `pad_to` tools. The queries are
  MCPToolBench++'s filesystem set (Fan et al., 2025; github.com/mcp-tool-bench/MCPToolBenchPP:
  `data/file_system/filesystem_0723_single.json`, 241 queries, each labelled with the
  server-filesystem tool that answers it). Nobody wrote public queries for the everything and
  memory servers, so their tools are in the catalog only as candidates.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from toolweave.tools import ToolAnnotations, ToolContext, ToolResult
from toolweave.tools.registry import TOOL_NAME

_SEAL_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}
_ACEBENCH_FILES = (
    "atom_bool",
    "atom_enum",
    "atom_list",
    "atom_number",
    "atom_object_deep",
    "atom_object_short",
    "preference",
    "similar_api",
    "single_turn_parallel_function",
    "single_turn_single_function",
)
_PARALLEL_SUFFIX = re.compile(r"_\d+$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


@dataclasses.dataclass(frozen=True)
class CatalogTool:
    """A tool definition of a public set. Only its definition is measured: running it says so.
    A name the registry cannot take (ACEBench names some tools in Chinese) gets a neutral
    `tool_<n>` name and keeps the set's name as its title, which search reads."""

    name: str
    description: str
    parameters: dict[str, Any]
    annotations: ToolAnnotations = dataclasses.field(default_factory=ToolAnnotations)
    permissions: frozenset[Any] = frozenset()
    primary_arg: str | None = None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text_result(f"{self.name} is a catalog entry of a benchmark set")


@dataclasses.dataclass
class ToolSet:
    name: str
    source: str
    tools: dict[str, tuple[str, dict[str, Any]]]  # label -> (description, parameters)
    queries: list[tuple[str, frozenset[str]]]  # (query, labels of the tools that serve it)
    chinese: bool = False

    def catalog(self) -> tuple[list[CatalogTool], dict[str, str]]:
        """The set's tools, and the map from registry name to the set's label."""
        tools, labels = [], {}
        for label, (description, parameters) in sorted(self.tools.items()):
            if TOOL_NAME.match(label):
                tool = CatalogTool(label, description, parameters)
            else:
                name = f"tool_{len(tools)}"
                tool = CatalogTool(name, description, parameters, ToolAnnotations(title=label))
            tools.append(tool)
            labels[tool.name] = label
        return tools, labels


def _one_string(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


def load_metatool(folder: Path) -> ToolSet:
    plugins = json.loads((folder / "plugin_des.json").read_text(encoding="utf-8"))
    tools = {name: (description, _one_string("query")) for name, description in plugins.items()}
    with (folder / "data" / "all_clean_data.csv").open(encoding="utf-8") as handle:
        rows = [(row["Query"], row["Tool"]) for row in csv.DictReader(handle)]
    queries = [(query, frozenset([tool])) for query, tool in rows if tool in tools]
    return ToolSet("MetaTool", str(folder), tools, queries)


def _seal_schema(api: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: {
            "type": _SEAL_TYPES.get(str(spec.get("type")), "string"),
            "description": str(spec.get("description", "")),
        }
        for name, spec in (api.get("parameters") or {}).items()
    }
    return {"type": "object", "properties": properties, "required": list(api.get("required", []))}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def load_seal_tools(folder: Path) -> ToolSet:
    """`folder` is the repository's `Seal-Tools_Dataset`."""
    tools: dict[str, tuple[str, dict[str, Any]]] = {}
    for api in _jsonl(folder / "tool.jsonl"):
        tools.setdefault(api["api_name"], (api["api_description"], _seal_schema(api)))
    queries = []
    for split in ("test_in_domain", "test_out_domain"):
        for item in _jsonl(folder / f"{split}.jsonl"):
            gold = frozenset(call["api"] for call in item["calling"] if call["api"] in tools)
            if gold:
                queries.append((item["query"], gold))
    return ToolSet("Seal-Tools (test splits)", str(folder), tools, queries)


_RAPIDAPI_TYPES = {"STRING": "string", "NUMBER": "number", "BOOLEAN": "boolean"}
_STABLETOOLBENCH_FILES = (
    "G1_category",
    "G1_instruction",
    "G1_tool",
    "G2_category",
    "G2_instruction",
    "G3_instruction",
)


def _rapidapi_label(tool: str, api: str) -> str:
    return f"{_UNSAFE.sub('_', tool).strip('_')}__{_UNSAFE.sub('_', api).strip('_')}"


def load_stabletoolbench(folder: Path) -> ToolSet:
    """`folder` is the repository's `solvable_queries/test_instruction`."""
    tools: dict[str, tuple[str, dict[str, Any]]] = {}
    queries = []
    for stem in _STABLETOOLBENCH_FILES:
        for item in json.loads((folder / f"{stem}.json").read_text(encoding="utf-8")):
            for api in item["api_list"]:
                required = api.get("required_parameters") or []
                properties = {
                    p["name"]: {
                        "type": _RAPIDAPI_TYPES.get(str(p.get("type")), "string"),
                        "description": str(p.get("description") or ""),
                    }
                    for p in [*required, *(api.get("optional_parameters") or [])]
                }
                schema = {
                    "type": "object",
                    "properties": properties,
                    "required": [p["name"] for p in required],
                }
                about = f"{api['tool_name']} ({api['category_name']}): {api['api_description']}"
                label = _rapidapi_label(api["tool_name"], api["api_name"])
                tools.setdefault(label, (about.strip(), schema))
            gold = frozenset(_rapidapi_label(tool, api) for tool, api in item["relevant APIs"])
            if gold and gold <= tools.keys():
                queries.append((item["query"], gold))
    return ToolSet("ToolBench test queries (StableToolBench)", str(folder), tools, queries)


def _user_turns(conversation: str) -> str:
    turns = re.split(r"^(user|system):\s*", conversation, flags=re.MULTILINE)
    # re.split keeps the speaker before each turn's text
    return "\n".join(
        text.strip()
        for speaker, text in zip(turns[1::2], turns[2::2], strict=True)
        if speaker == "user"
    )


def load_acebench(folder: Path, language: str) -> ToolSet:
    """`folder` is the repository's `data_all`; `language` "zh" or "en"."""
    data = folder / f"data_{language}"
    tools: dict[str, tuple[str, dict[str, Any]]] = {}
    queries = []
    for stem in _ACEBENCH_FILES:
        items = _jsonl(data / f"data_normal_{stem}.json")
        answers = {
            a["id"]: a["ground_truth"]
            for a in _jsonl(data / "possible_answer" / f"data_normal_{stem}.json")
        }
        for item in items:
            for function in item["function"]:
                parameters = function.get("parameters") or _NO_PARAMETERS
                tools.setdefault(function["name"], (function["description"], parameters))
        for item in items:
            truth = answers[item["id"]]
            calls = truth if isinstance(truth, list) else [truth]
            named = {name for call in calls for name in call}
            gold = frozenset(
                name if name in tools else _PARALLEL_SUFFIX.sub("", name) for name in named
            )
            if gold <= tools.keys():
                queries.append((_user_turns(item["question"]), gold))
    label = "Chinese" if language == "zh" else "English"
    return ToolSet(
        f"ACEBench {label} (single-turn)", str(data), tools, queries, chinese=language == "zh"
    )


def load_mcp_catalog(
    real: dict[str, tuple[str, dict[str, Any]]], livemcptool: Path, queries: Path, pad_to: int
) -> ToolSet:
    """`real`: the installed servers' tools (`server__tool` -> description, input schema);
    `livemcptool`: LiveMCPTool's `tools.json`; `queries`: MCPToolBench++'s filesystem file."""
    tools = dict(real)
    installed = {name.split("__", 1)[0] for name in real}
    for server in json.loads(livemcptool.read_text(encoding="utf-8")):
        if len(tools) >= pad_to:
            break
        for key, listing in server["tools"].items():
            if key in installed:
                continue
            for tool in listing["tools"]:
                name = f"{_UNSAFE.sub('_', key)}__{tool['name']}"
                schema = tool.get("inputSchema") or _NO_PARAMETERS
                tools.setdefault(name, (tool.get("description") or "", schema))
    labelled = []
    for item in json.loads(queries.read_text(encoding="utf-8")):
        gold = frozenset(f"filesystem__{c['name']}" for c in item["function_call_label"])
        if gold <= tools.keys():
            labelled.append((item["query"], gold))
    return ToolSet(
        "Real MCP servers + LiveMCPTool, MCPToolBench++ filesystem queries",
        f"{livemcptool}, {queries}",
        tools,
        labelled,
    )
