"""The peer: a LiteLLM proxy (its own virtual env, `.venv-litellm`, `pip install 'litellm[proxy]'`), one worker,
pointed at the same simulated upstream as an OpenAI-compatible model. Used by `python -m bench.run --peer`."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-litellm"
EXE = VENV / "bin" / "litellm"


def available() -> bool:
    return EXE.exists()


def version() -> str | None:
    py = VENV / "bin" / "python"
    if not py.exists():
        return None
    out = subprocess.run([str(py), "-c", "from importlib.metadata import version; print(version('litellm'))"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def command(*, upstream: str, model: str, port: int, tmp: Path) -> tuple[list[str], dict[str, str], str]:
    """The command line, environment and master key that serve `model` from `upstream` on 127.0.0.1:port,
    offline. LiteLLM refuses to start without a master key; with one (and no database) it checks the bearer
    key against it, which is the cheapest authentication it has."""
    key = "sk-bench-" + secrets.token_hex(16)
    cfg = tmp / "litellm.yaml"
    cfg.write_text(
        "model_list:\n"
        f"  - model_name: {model}\n"
        "    litellm_params:\n"
        f"      model: openai/{model}\n"
        f"      api_base: {upstream}/openai/v1\n"
        "      api_key: sk-bench-not-used\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV")}
    env.update(LITELLM_MASTER_KEY=key, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_LOG="ERROR", LITELLM_TELEMETRY="False",
               DISABLE_SCHEMA_UPDATE="True", NO_PROXY="*",
               # Offline: streamed llama-named models make LiteLLM fetch a tokenizer from huggingface.co (5 retries,
               # ~23 s, stalling the proxy); offline mode makes that fail at once.
               HF_HUB_OFFLINE="1")
    cmd = [str(EXE), "--config", str(cfg), "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"]
    return cmd, env, key
