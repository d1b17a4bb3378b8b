#!/usr/bin/env bash
# Install ChatEvaluationPlatform into .venv and build the worker page. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "setup.sh: $PYTHON not found; install Python 3.11 or newer (or set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "setup.sh: Python 3.11 or newer is needed, found $("$PYTHON" --version 2>&1); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if ! command -v node >/dev/null 2>&1; then
  echo "setup.sh: Node.js 20 or newer is needed to build the worker page (https://nodejs.org)" >&2
  exit 1
fi
NODE_OK=$(node -p 'const [a, b] = process.versions.node.split(".").map(Number); a > 20 || (a === 20 && b >= 19) ? 1 : 0')
if [ "$NODE_OK" != 1 ]; then
  echo "setup.sh: Node.js 20.19 or newer is needed, found $(node --version)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

if [ -f frontend/package.json ]; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
fi
echo "setup.sh: ready. Start the demo with: .venv/bin/python welcome.py conf=demo"
