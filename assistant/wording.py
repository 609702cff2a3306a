"""The fixed words around an answer (outcome, section headings) in the reader's language, and
`Sentence`: one of the assistant's own sentences (a reason, a next step, where an error comes from)
with its Chinese version, which each surface shows to a Chinese reader (`in_language`).

Every surface (terminal, web, Slack) draws the same sections; their names are kept here once, in
English and Chinese, so a Chinese reader's lead or unknown is framed in Chinese even where the
entry's own text has no translation. Outcome keywords (FIX, LEAD, UNKNOWN) stay in capitals in
both languages: they are what scripts and the exit code speak."""

from __future__ import annotations

HEADINGS: dict[str, tuple[str, str]] = {
    "fix_badge": ("a known problem with a known fix", "已知问题，有修复方法"),
    "fix_outcome": ("FIX", "FIX：已知问题，修复方法如下"),
    "by_traceback_files": ("by the files in your traceback", "由调用栈里的 SGLang 文件判断"),
    "by_message": ("by the releases that print your SGLang message", "由会打印这条 SGLang 报错的版本判断"),
    "by_traceback_and_message": ("by the files in your traceback and the releases that print its message",
                                 "由调用栈里的 SGLang 文件和会打印这条报错的版本判断"),
    "lead": ("LEAD (not confirmed)", "LEAD（未确认）：可能相关的已知问题"),
    "unknown": ("UNKNOWN: not a known problem", "UNKNOWN：不是已知问题"),
    "question_lead": ("LEAD (not confirmed): this reads as a how-to question",
                      "LEAD（未确认）：这是使用或配置问题"),
    "question_unknown": ("UNKNOWN: this reads as a how-to question", "UNKNOWN：这是使用或配置问题"),
    "why_lead": ("Why it is only a lead", "为什么只是线索"),
    "why_unknown": ("Why there is no fix", "为什么没有修复方法"),
    "why_not_closest": ("Why the closest entry ({ref}) is not the fix", "为什么最接近的条目（{ref}）不是修复方法"),
    "confirm_if": ("It would apply if your log also shows", "如果日志里还有下面这行，它就适用"),
    "root_error": ("The root error as read from your paste", "从你贴的内容里读出的根本错误"),
    "where_arises": ("Where it arises", "出错位置"),
    "where_from": ("Where it comes from", "报错来源"),
    "releases": ("SGLang releases", "SGLang 版本"),
    "gpu_at_failure": ("GPU memory at the failure", "出错时的显存"),
    "gpu_after_load": ("GPU memory after loading", "加载后的显存"),
    "dependency": ("Dependency", "依赖"),
    "release_change": ("Release change", "版本变化"),
    "detected": ("Detected", "检测到"),
    "model_reading": ("The model's reading of the error (not from the knowledge base)",
                      "模型对错误的解读（不来自知识库）"),
    "collect_next": ("Collect or try next", "接下来收集或尝试"),
    "matched": ("Matched in your log", "日志中匹配到"),
    "what_went_wrong": ("What went wrong", "问题原因"),
    "fix": ("Fix", "修复步骤"),
    "verify": ("Verify", "验证"),
    "verify_next": ("Verify / next", "验证 / 下一步"),
    "verify_step": ("Verify: ", "验证："),   # the prefix of an entry's verify line among the next steps
    "warnings": ("Warnings", "注意"),
    "checked": ("Checked before display", "显示前已核对"),
    "sources": ("Sources", "来源"),
    "similar": ("Similar reports", "相似报告"),
    "other_candidates": ("Other candidates", "其他候选"),
    "score_line": ("match score {score}, answer confidence {confidence}, KB confidence: {kb}, mode: {mode}",
                   "匹配分 {score}，答案置信度 {confidence}，知识库可信度：{kb}，模式：{mode}"),
    # an entry's own confidence, as the score line says it
    "confidence_high": ("high", "高"), "confidence_medium": ("medium", "中"), "confidence_low": ("low", "低"),
    "confidence_medium-high": ("medium-high", "中高"), "confidence_low-medium": ("low-medium", "中低"),
    "confidence_medium-low": ("medium-low", "中低"),
    # how the answer was written, as the score line says it
    "mode_extractive": ("extractive", "知识库原文"), "mode_llm": ("llm", "模型撰写（已核对）"),
    # the words of the "where it arises" line
    "innermost_frame": ("innermost frame in", "最内层调用栈帧在"),
    "named_in_paste": ("(named in your paste) is in", "（你贴的内容里提到的）位于"),
}


def colon(language: str = "en") -> str:
    """The colon after a label for a reader of `language`: Chinese text uses the full-width one."""
    return "：" if language == "zh" else ":"


def heading(key: str, language: str = "en") -> str:
    """The name of a section or outcome in "en" or "zh" (anything else reads as English)."""
    english, chinese = HEADINGS[key]
    return chinese if language == "zh" else english


class Sentence(str):
    """One of the assistant's own sentences (a reason, a next step): the English text is what it
    is as a string (JSON, logs, tests); it carries its Chinese version for a Chinese reader. What
    it quotes (error lines, flags, commands, titles) is the same in both."""

    zh: str

    def __new__(cls, english: str, chinese: str) -> Sentence:
        sentence = super().__new__(cls, english)
        sentence.zh = chinese
        return sentence


def in_language(text: str, language: str = "en") -> str:
    """The text for a reader of `language`: a Sentence's Chinese version for "zh", else as is."""
    if language == "zh" and isinstance(text, Sentence):
        return text.zh
    return str(text)
