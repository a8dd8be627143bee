"""How many threads of a sealed blind set the lines added since a commit cite outside the set's own
folder, as a count only (never their names): work tuned on a sealed set's own threads would make its
end score no measure.

    .venv/bin/python bench/sealed_overlap.py tests/fixtures/tickets_blind_v 6ff837f
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def main(folder: str, base: str) -> int:
    data = tomllib.loads((Path(folder) / "tickets.toml").read_text(encoding="utf-8"))
    tickets = data.get("ticket", data.get("tickets", []))
    keys = []
    for t in tickets:
        url = str(t.get("url", "")).rstrip("/").lower()
        m = re.search(r"github\.com/([^/]+)/([^/]+)/(?:issues|pull|discussions)/(\d+)", url)
        keys.append((url, f"{m.group(1)}/{m.group(2)}#{m.group(3)}", f"/{m.group(2)}/issues/{m.group(3)}") if m else (url,))
    diff = subprocess.run(["git", "diff", base, "--", ".", f":(exclude){folder}", ":(exclude)bench/README.md"],
                          capture_output=True, text=True, check=True).stdout.lower()
    added = "\n".join(line for line in diff.splitlines() if line.startswith("+"))
    cited = sum(1 for k in keys if any(x and x in added for x in k))
    print(f"{len(keys)} threads in {folder}; cited by lines added since {base} outside it: {cited}")
    return 1 if cited else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: sealed_overlap.py SET_FOLDER BASE_COMMIT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
