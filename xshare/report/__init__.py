"""The report: groups, the reading, periods, rows files, the team rollup and the history."""
