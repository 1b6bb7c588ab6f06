"""Outputs built from stored results, running nothing: the HTML report of an experiment run (report.py) and the README's reproduced-results section (readme.py)."""
