"""What xshare sends to other tools: its per-session figures as OpenTelemetry metrics (otlp.py)."""
