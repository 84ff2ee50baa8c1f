"""The console's screens beside the main one: help, settings, theme picker, approval detail."""
