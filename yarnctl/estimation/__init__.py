"""Estimators that read cluster history and annotate policy state; they never decide."""
