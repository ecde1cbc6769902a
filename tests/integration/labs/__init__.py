"""The lab's own tests against a running lab (conftest.py says why this is a package)."""
