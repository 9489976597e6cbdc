"""Measuring many sessions (every agent, in parallel, with the rows cache) and finding one."""
