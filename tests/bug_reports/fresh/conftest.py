"""The held-out sets' programs are data for tests/bug_reports/test_fresh_sets.py and
scripts/measure_bug_set.py, not tests: a case named like a test (`test_loss_...py`) would be
collected and run by pytest, and fail as the bug it re-creates."""

collect_ignore_glob = ["*/cases/*.py", "*/correct/*.py"]
