from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from providers.base import NO_THINKING_SWITCH, THINKING_SWITCHES
from routing.services import provider_add


class Command(BaseCommand):
    help = "Add your own OpenAI-compatible endpoint (vLLM, Ollama, a company proxy) and its models."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:11434/v1")
        parser.add_argument("--api-key-env", default="", help="environment variable holding the key, if any")
        parser.add_argument("--model", action="append", required=True, metavar="ID[=UPSTREAM_NAME]")
        parser.add_argument("--price-input", type=float, default=0.0, help="USD per million input tokens")
        parser.add_argument("--price-output", type=float, default=0.0, help="USD per million output tokens")
        parser.add_argument("--context-window", type=int, default=32768)
        parser.add_argument("--max-output-tokens", type=int, default=4096)
        parser.add_argument("--tools", action="store_true", help="the models support function calling")
        parser.add_argument("--reasoning", choices=["none", "switchable", "always_on"],
                            help="whether the models reason: never, when asked (switchable), or always; "
                                 "without it their thinking mode is reported as not known")
        parser.add_argument("--thinking-switch", choices=THINKING_SWITCHES,
                            help="how the endpoint turns a switchable model's thinking on and off: reasoning_effort "
                                 '("none" is off), chat_template_kwargs ({"enable_thinking": ...}, vLLM and SGLang '
                                 'with Qwen3), reasoning_enabled ({"reasoning": {"enabled": ...}}), or none; without '
                                 "it nothing is sent, and the models run their default")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["base_url"].startswith(("http://", "https://")):
            raise CommandError("--base-url must start with http:// or https://")
        if options["thinking_switch"] not in (None, NO_THINKING_SWITCH) and options["reasoning"] != "switchable":
            raise CommandError("--thinking-switch applies to models whose thinking can be switched: "
                               "add --reasoning switchable")
        models = []
        for spec in options["model"]:
            catalog_id, _, upstream = spec.partition("=")
            if not catalog_id:
                raise CommandError(f"--model {spec!r}: expected ID or ID=UPSTREAM_NAME")
            models.append((catalog_id, upstream or catalog_id))
        provider = provider_add(
            name=options["name"], base_url=options["base_url"], api_key_env=options["api_key_env"], models=models,
            price_input=options["price_input"], price_output=options["price_output"],
            context_window=options["context_window"], max_output_tokens=options["max_output_tokens"],
            tools=options["tools"], reasoning=options["reasoning"], thinking_switch=options["thinking_switch"],
        )
        self.stdout.write(f"provider {provider.slug}: {', '.join(m for m, _ in models)}")
