"""Judgements over history, once a tick: history, forecasts, diagnoses, alerts, owners, the process tree."""
