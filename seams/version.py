"""The package's version, in a module of its own at the bottom of the layers: the root
(`seams.__version__`) and the modules that send it (the remote judge's User-Agent, SARIF,
OpenTelemetry) read it here, so nothing below the curated surface imports the package root."""

__version__ = "0.1.0"

__all__ = ["__version__"]
