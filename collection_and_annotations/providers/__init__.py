"""Providers: where workers come from and how their identity is vouched for."""
