"""Analysis of a study's answers: behaviour rates, ratings, comparisons and ranking, agreement
and quality, written as results.json and a self-contained HTML report (docs/analysis.md)."""
