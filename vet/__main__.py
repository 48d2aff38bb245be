"""Entry point for ``python -m vet``."""

from vet.cli import main

raise SystemExit(main())
