"""External MCP servers an administrator registered; their allowlisted tools join the agentic loop."""
from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from docmind.mcp import policy

ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")
SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,23}$")


class McpTransport(models.TextChoices):
    HTTP = "http", _("Streamable HTTP (URL)")
    STDIO = "stdio", _("Local command (stdio)")


class McpServer(models.Model):
    name = models.CharField(_("name"), max_length=24, unique=True,
                            help_text=_("Short id (a-z, 0-9, _); the loop sees its tools as mcp_<name>_<tool>."))
    enabled = models.BooleanField(_("enabled"), default=False,
                                  help_text=_("Off until switched on: nothing is called before."))
    transport = models.CharField(_("transport"), max_length=8, choices=McpTransport.choices,
                                 default=McpTransport.HTTP)
    url = models.URLField(_("URL"), blank=True,
                          help_text=_("Streamable HTTP endpoint, e.g. https://tools.example/mcp"))
    command = models.CharField(_("command"), max_length=512, blank=True,
                               help_text=_("Executable for a stdio server."))
    args = models.JSONField(_("arguments"), default=list, blank=True,
                            help_text=_('Command arguments, a JSON list: ["--flag", "x"].'))
    header_env = models.JSONField(
        _("headers from the environment"), default=dict, blank=True,
        help_text=_('HTTP headers whose values come from DocMind\'s environment, by variable NAME only: '
                    '{"Authorization": "MY_TOOLS_AUTH"}. The value itself is never stored here.'))
    env_names = models.JSONField(_("environment variables"), default=list, blank=True,
                                 help_text=_("Environment variable NAMES passed to a stdio command (values are "
                                             "read from DocMind's environment at call time)."))
    allowed_tools = models.JSONField(_("allowed tools"), default=list, blank=True,
                                     help_text=_("Allowlist of the server's tool names; any other tool is ignored."))
    timeout_seconds = models.FloatField(_("timeout (seconds)"), default=10.0,
                                        help_text=_("Per tool call; a slower call is dropped."))
    result_max_tokens = models.PositiveIntegerField(_("result limit (tokens)"), default=800,
                                                    help_text=_("Longer results are truncated."))
    tool_limits = models.JSONField(
        _("per-tool limits"), default=dict, blank=True,
        help_text=_('Per-tool overrides of the two limits above: {"search": {"timeout_seconds": 3, '
                    '"result_max_tokens": 400}}.'))
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("external MCP server")
        verbose_name_plural = _("external MCP servers")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if not SERVER_NAME.match(self.name or ""):
            errors["name"] = "Use 1-24 lowercase letters, digits or _ (starting with a letter or digit)."
        if self.transport == McpTransport.HTTP and not self.url:
            errors["url"] = "An HTTP server needs its URL."
        elif self.transport == McpTransport.HTTP:
            try:
                policy.check_url_literal(self.url)
            except policy.McpPolicyError as exc:
                errors["url"] = str(exc)
        if self.transport == McpTransport.STDIO and not policy.stdio_allowed():
            errors["transport"] = "Stdio servers are off; the operator enables them with DOCMIND_MCP_STDIO=1."
        elif self.transport == McpTransport.STDIO and not self.command.strip():
            errors["command"] = "A stdio server needs a command."
        if not isinstance(self.args, list) or not all(isinstance(a, str) for a in self.args):
            errors["args"] = "A JSON list of strings."
        if not isinstance(self.header_env, dict) or not all(
                isinstance(k, str) and k and isinstance(v, str) and ENV_NAME.match(v)
                for k, v in self.header_env.items()):
            errors["header_env"] = "A JSON object: header name → environment variable NAME (A-Z, 0-9, _)."
        elif not policy.secret_names_ok(self.header_env.values()):
            errors["header_env"] = f"Only environment variables named {policy.SECRET_PREFIX}… may be sent."
        if not isinstance(self.env_names, list) or not all(isinstance(n, str) and ENV_NAME.match(n)
                                                            for n in self.env_names):
            errors["env_names"] = "A JSON list of environment variable NAMES (A-Z, 0-9, _)."
        elif not policy.secret_names_ok(self.env_names):
            errors["env_names"] = f"Only environment variables named {policy.SECRET_PREFIX}… may be passed."
        if not isinstance(self.allowed_tools, list) or not all(isinstance(t, str) and TOOL_NAME.match(t)
                                                                for t in self.allowed_tools):
            errors["allowed_tools"] = "A JSON list of tool names."
        # The agentic loop waits at most 30 s for any tool call.
        if not 0.5 <= (self.timeout_seconds or 0) <= 30:
            errors["timeout_seconds"] = "Between 0.5 and 30 seconds."
        if not 50 <= (self.result_max_tokens or 0) <= 4000:
            errors["result_max_tokens"] = "Between 50 and 4000 tokens."
        if not _limits_ok(self.tool_limits):
            errors["tool_limits"] = ("A JSON object: tool name → {timeout_seconds: 0.5-30, "
                                     "result_max_tokens: 50-4000} (either or both).")
        if errors:
            raise ValidationError(errors)


def _limits_ok(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    bounds = {"timeout_seconds": (0.5, 30), "result_max_tokens": (50, 4000)}
    for tool, limits in value.items():
        if not (isinstance(tool, str) and TOOL_NAME.match(tool) and isinstance(limits, dict) and limits):
            return False
        for key, number in limits.items():
            if key not in bounds or isinstance(number, bool) or not isinstance(number, int | float):
                return False
            if not bounds[key][0] <= number <= bounds[key][1]:
                return False
    return True
