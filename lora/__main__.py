"""``python -m lora generate|train|tiny ...``: the three CLIs behind one name."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ("generate", "train", "tiny")
    if not argv or argv[0] not in commands:
        print(f"usage: python -m lora {{{','.join(commands)}}} ...", file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "generate":
        from .generate import main as run
    elif command == "train":
        from .train import main as run
    else:
        from .tiny import main as run
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
