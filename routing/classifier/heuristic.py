"""Keyword and shape rules used when the learned model is missing or unsure."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from routing.classifier.features import Window

_RULES: dict[str, tuple[re.Pattern[str], ...]] = {
    "translation": (
        re.compile(
            r"\b(translat\w*|tradu\w*|übersetz\w*|traduc\w*|перевед\w*|перевод\w*)\b|翻译|翻訳|訳して",
        ),
        re.compile(
            r"\b(into|to|in|en|auf|на)\s+(english|french|spanish|german|italian|portuguese|chinese|"
            r"japanese|russian|korean|dutch|arabic|français|anglais|espagnol|inglés|francés|alemán|"
            r"englisch|französisch|deutsch|inglese|francese|inglês|francês|английский|французский)\b",
        ),
    ),
    "summarization": (
        re.compile(
            r"\b(summari[sz]\w*|summary|tl;?dr|condense|key points|main points|recap|résum\w*|"
            r"resum\w*|zusammenfass\w*|riassum\w*|sintetiz\w*|кратк\w*|резюм\w*|суммир\w*)\b|"
            r"总结|摘要|概括|要約|まとめ",
        ),
    ),
    "extraction": (
        re.compile(
            r"\b(extract\w*|pull out|parse (?:the|this)|as json|into json|json (?:object|with)|fields?|"
            r"list (?:all|every) (?:the )?(?:names|dates|emails|amounts)|named entit\w*|extrai\w*|"
            r"extra(?:e|er|iga)\w*|extrahier\w*|извлек\w*)\b|提取|抽出",
        ),
    ),
    "coding": (
        re.compile(
            r"```|\b(python|javascript|typescript|java|rust|golang|c\+\+|sql|regex|function|bug|"
            r"stack ?trace|exception|compile\w*|refactor\w*|unit tests?|api|endpoint|class|"
            r"script|code|código|codice|funktion|función|funzione|fonction|код\w*|функци\w*)\b|"
            r"\bdef |\bimport |=>|\(\)|代码|函数|コード|関数",
        ),
    ),
    "maths": (
        re.compile(
            r"\b(solve|equation|integral|derivative|probability|prove|theorem|matrix|eigen\w*|"
            r"calculate|compute|how many|percent\w*|sum of|prime|modulo|polynomial|limit|"
            r"résou\w*|équation|calcul\w*|ecuaci\w*|gleichung|berechne\w*|equazione|уравнен\w*|"
            r"вычисл\w*)\b|\d+\s*[-+*/^×÷]\s*\d+|[∫∑√π]|方程|积分|概率|計算|確率",
        ),
    ),
    "reasoning": (
        re.compile(
            r"\b(puzzle|riddle|logic\w*|deduce|which (?:one|option)|trade-?offs?|pros and cons|"
            r"should (?:we|i) (?:choose|pick|go with)|plan|schedule|argument|fallacy|assum\w*|"
            r"énigme|rätsel|acertijo|enigma|головоломк\w*|логик\w*)\b|谜题|推理|パズル",
        ),
    ),
    "writing": (
        re.compile(
            r"\b(write|draft|compose|poem|story|essay|blog|post|email|e-mail|letter|cover letter|"
            r"slogan|tagline|speech|lyrics|haiku|rédige\w*|écri\w*|escrib\w*|redact\w*|schreib\w*|"
            r"scriv\w*|escrev\w*|напиш\w*|сочин\w*)\b|写一|写一篇|作文|書いて|詩",
        ),
    ),
    "factual": (
        re.compile(
            r"^\s*(who|what|when|where|why|how does|how do|which|explain|define|qui|quand|où|"
            r"pourquoi|quién|cuándo|dónde|por qué|wer|wann|wo|warum|chi|quando|dove|perché|"
            r"quem|onde|кто|когда|где|почему|что такое)\b|什么是|为什么|とは|なぜ",
        ),
    ),
    "chat": (
        re.compile(
            r"^\s*(hi|hello|hey|thanks|thank you|good (?:morning|night|evening)|bonjour|salut|hola|"
            r"hallo|ciao|olá|oi|привет|здравствуй\w*)\b|\b(how are you|i feel|i'm feeling|i am feeling|"
            r"advice|lonely|bored|what do you think|your favou?rite)\b|你好|こんにちは",
        ),
    ),
}
_PRIORITY = (
    "translation",
    "summarization",
    "extraction",
    "coding",
    "maths",
    "reasoning",
    "writing",
    "factual",
    "chat",
)


_HEAD_CHARS = 400
_TAIL_CHARS = 200


def _rule_text(user: str) -> str:
    """Return the lower-cased start and end of the user window, where the ask usually is."""
    if len(user) > _HEAD_CHARS + _TAIL_CHARS:
        user = user[:_HEAD_CHARS] + "\n" + user[-_TAIL_CHARS:]
    return user.lower()


@dataclass(frozen=True, slots=True)
class Guess:
    """A rule-based task guess and how strongly the rules backed it (0..1)."""

    task: str
    strength: float


def guess_task(window: Window) -> Guess:
    """Return the family whose rules match the user window most, preferring specific families on ties."""
    text = _rule_text(window.user)
    best, best_hits = "", 0
    for task in _PRIORITY:
        hits = sum(len(pattern.findall(text)) for pattern in _RULES[task])
        if hits > best_hits:
            best, best_hits = task, hits
    if best:
        return Guess(task=best, strength=min(0.3 + 0.1 * best_hits, 0.6))
    if "?" in text or "？" in text:
        return Guess(task="factual", strength=0.2)
    return Guess(task="chat", strength=0.1)


def guess_complexity(dense: np.ndarray) -> str:
    """Return a complexity band from length, hard-signal, constraint and list counts."""
    log_length, hard, constraints, items, code = dense[1] * 5.0, dense[3] * 3.0, dense[4] * 6.0, dense[5] * 6.0, dense[6]
    score = hard * 1.5 + constraints * 0.5 + items * 0.3 + code + max(log_length - 4.0, 0.0)
    if score >= 4.0:
        return "hard"
    if score >= 1.5:
        return "standard"
    return "easy"
