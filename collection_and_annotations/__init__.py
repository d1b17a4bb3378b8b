"""ChatEvaluationPlatform: human evaluation of chatbots."""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
