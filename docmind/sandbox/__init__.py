"""Running model-written Python under OS isolation (bubblewrap namespaces, seccomp, cgroups)."""
from docmind.sandbox.python import PythonSandbox, runner_status
from docmind.sandbox.result import SandboxResult
from docmind.sandbox.runner import RunnerConfig, RunnerStatus, SandboxUnavailable

__all__ = ["PythonSandbox", "RunnerConfig", "RunnerStatus", "SandboxResult", "SandboxUnavailable", "runner_status"]
