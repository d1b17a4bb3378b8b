"""Start a task: `python welcome.py conf=<name> [key=value ...]` (see README)."""

import sys

from collection_and_annotations.cli.launch import main

if __name__ == "__main__":
    sys.exit(main())
