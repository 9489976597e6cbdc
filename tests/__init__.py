"""The tests, in folders that mirror the package (tests/agents/<name>/, tests/report/, ...): packages, so that two
folders may each hold a test_reader.py; shared fixtures and fake servers are in tests/support/."""
