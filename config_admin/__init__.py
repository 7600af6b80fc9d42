"""Run-time AI configuration: the sys_ai_config table, its typed accessor and admin."""
