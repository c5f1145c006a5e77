"""Agent Skills served by the MCP skills extension (SEP-2640): every skill folder under a root.

.venv/bin/python examples/mcp_skills_server.py                       # examples/skills, stdio
.venv/bin/python examples/mcp_skills_server.py DIR --http 8000        # Streamable HTTP at /mcp

A host with skill support (toolweave's `SkillLibrary.add_remote`, `toolweave run --mcp`) lists
them with `skills/list` and reads each file as a `skill://` resource, verified against its
digest. `toolweave serve`'s skills provider does the same for its configured skills.
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolweave.mcp import MCPServer
from toolweave.mcp.server import ServedSkill

HERE = Path(__file__).resolve().parent
arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
root = Path(arguments[0]) if arguments and not arguments[0].isdigit() else HERE / "skills"

server = MCPServer("skills", "1.0.0")
server.add_skills(
    [ServedSkill.from_folder(folder) for folder in sorted(root.iterdir()) if folder.is_dir()]
)


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run(transport="http", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run()
