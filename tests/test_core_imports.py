"""The core imports none of the integrations' dependencies: each is loaded only when asked for."""

import subprocess
import sys

# (not pyarrow: scikit-learn imports pandas, and pandas pyarrow, whenever they are installed)
FOREIGN = ("opentelemetry", "langgraph", "langchain_core", "ray")


def test_the_core_loads_no_integration_dependency():
    code = (
        "import sys, seams, seams.rubric, seams.routing, seams.queue, seams.decorators, seams.builtin, "
        "seams.judges.cassette, seams.cli, seams.calibration.check, seams.integrations\n"
        "seams.cli._register()\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FOREIGN!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
