"""The HTML summaries: one session's page, the index of sessions, their analysis and chart."""
