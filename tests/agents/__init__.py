"""Third-party ACP agents for tests: installer (``install``), launch recipes and a fake
Anthropic Messages API (``fake_anthropic``). See README.md beside this file."""
