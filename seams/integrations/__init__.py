"""Integrations with the tools seams' users already run, one module each, each an optional extra:

* `seams.integrations.otel` — OpenTelemetry spans for decisions and judge calls (`seams[otel]`);
* `seams.integrations.langgraph` — a rubric as a LangGraph node and conditional edge (`seams[langgraph]`);
* `seams.pytest_plugin` (beside this package, with the base install) — fixtures and assertions.

Nothing in the core imports these modules, so a dependency is loaded only by the code that asks for it.
"""
