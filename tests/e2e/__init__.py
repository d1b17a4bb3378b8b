"""Real-browser tests of the worker page (Playwright driving Debian's Chromium).

A package so that its conftest is `e2e.conftest` and does not shadow `tests/conftest.py`.
"""
