"""The web UI: a Gradio chat page over the assistant library (`ask serve`, `python -m ui.web`).

Paste a trace or drop a log file; the answer streams into the chat (its outcome first: a fix
carries a FIX badge, the matched problem and the fix with copyable commands; a lead or unknown is
a heading of its own, with why, the root error and what to collect, and no fix), the sources
panel beside it lists each matched entry or issue with its score, confidence or state and links,
and the panel below shows what the trace says about the setup (versions, GPU, flags). A banner says whether answers come from the SGLang
model or from the knowledge base alone. Thumbs up / down on an answer is stored with
FeedbackStore (`ask feedback` exports it). Errors are one line in the chat, never a traceback.

This module only wires Gradio to the library: reading the input (`lines_from_text`,
`lines_from_bytes`, `analyze_lines`), answering (`Assistant.answer`) and rendering (ui.markdown).

Follow-ups: the conversation so far is passed to `assistant.answer(history=...)`. A message with
no error line of its own and no file ("does this also happen with --tp 4?") is asked about the
last trace of the conversation: the query is the follow-up text followed by that trace. A message
with an error line or a file starts a new topic and becomes the trace that later follow-ups use.

Gradio is imported inside the functions that need it (it costs seconds), so `ask` stays fast.
"""

from __future__ import annotations

import argparse
import html
import itertools
import logging
import os
import queue
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from assistant.answer import Answer
from assistant.config import Settings
from assistant.errors import AssistantError, UsageError
from assistant.pipeline import lines_from_bytes, lines_from_text
from assistant.trace import Analysis, analyze_lines
from assistant.redact import install_log_redaction, redact
from ui.markdown import (answer_markdown, detected_markdown, history_text, page_safe, question_markdown,
                         sources_markdown)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")   # offline: no telemetry calls

log = logging.getLogger("ask.web")

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 7860
DEFAULT_CONCURRENCY = 8          # answers computed at once; the rest wait in Gradio's queue
PASTE_AS_FILE_CHARS = 20_000     # a longer paste becomes an attached file (triaged line by line)
MAX_UPLOAD = "200mb"
STREAM_INTERVAL = 0.1            # seconds between chat updates while the model writes
FEEDBACK_OPTIONS = ("Like", "Dislike", "Wrong problem matched", "Fix did not work")
THINKING = "_Reading the trace and searching the knowledge base…_"
WRITING = "_The SGLang model is writing the answer (each piece is checked before it is shown)…_"

EXAMPLES = [
    ("libnuma missing", "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory\n"
     "[sgl_kernel] CRITICAL: Could not load any common_ops library!"),
    ("Not enough memory at startup",
     "$ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --tp 4 "
     "--mem-fraction-static 0.5\n"
     "sglang 0.4.6.post1, torch 2.6.0+cu124, NVIDIA H100 80GB HBM3\n"
     "Traceback (most recent call last):\n"
     '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2215, in run_scheduler_process\n'
     "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
     "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."),
    ("unrecognized arguments",
     "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-reasoning\n"
     "usage: launch_server.py [-h] --model-path MODEL_PATH\n"
     "launch_server.py: error: unrecognized arguments: --enable-reasoning"),
    ("NCCL error in Docker",
     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:81, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
     "Error while creating shared memory segment /dev/shm/nccl-4Xq2 (size 9637888)"),
    ("Address already in use", "OSError: [Errno 98] Address already in use"),
]

# Defence in depth behind ui.markdown.page_safe: answer content can make the page load nothing
# from elsewhere (no remote images, media, frames or plugins); the page's own files are 'self'.
CONTENT_SECURITY_POLICY = ('<meta http-equiv="Content-Security-Policy" content="img-src \'self\' data: blob:; '
                           "media-src 'self' data: blob:; frame-src 'self'; object-src 'none'\">")

CSS = """
#mode-banner .banner { padding: 8px 12px; border-radius: 8px; font-weight: 500; }
#mode-banner .banner::before { content: "●"; margin-right: 8px; }
#mode-banner .banner.llm { background: #e8f5e9; color: #1b5e20; }
#mode-banner .banner.llm::before { color: #2e7d32; }
#mode-banner .banner.kb { background: #fff8e1; color: #6d4c00; }
#mode-banner .banner.kb::before { color: #f9a825; }
#sources details.source { border: 1px solid var(--border-color-primary); border-radius: 6px;
  padding: 4px 8px; margin: 6px 0; }
#sources details.source summary { cursor: pointer; }
#sources details.source pre { white-space: pre-wrap; font-size: 0.85em; }
"""

# Gradio's autoscroll jumps to the bottom of a long answer, past the problem's title and what went
# wrong; instead, on every chat update, bring the top of the latest answer into view.
SHOW_LATEST_ANSWER = """() => { setTimeout(() => {
  const chat = document.querySelector('#chat');
  const rows = chat ? chat.querySelectorAll('.message-row.bot-row') : [];
  const row = rows[rows.length - 1];
  if (!row) return;
  let box = row.parentElement;
  while (box && box !== chat && !(box.scrollHeight > box.clientHeight + 1 &&
         /(auto|scroll)/.test(getComputedStyle(box).overflowY))) { box = box.parentElement; }
  if (!box || box === chat) return;
  box.scrollTop += row.getBoundingClientRect().top - box.getBoundingClientRect().top - 48;
}, 60); }"""


# ---- session state ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trace:
    """A message that had an error in it: follow-ups are asked about it."""
    text: str
    file: str | None = None
    file_name: str | None = None


@dataclass(frozen=True)
class Rateable:
    """What a thumbs up / down on one answer is stored with."""
    answer_key: str
    question: str
    answer_json: dict
    matched_ids: list[str]
    mode: str


@dataclass
class Session:
    history: list[dict] = field(default_factory=list)       # what the model sees of earlier turns
    trace: Trace | None = None
    rateable: dict[int, Rateable] = field(default_factory=dict)  # chat message index -> answer


# ---- input ----------------------------------------------------------------------------------------

def read_message(message) -> tuple[str, str | None]:
    """Gradio's MultimodalTextbox value (or a plain string from an API caller) -> (text, file)."""
    if isinstance(message, str):
        return message, None
    message = message or {}
    files = message.get("files") or []
    file = files[0] if files else None
    if isinstance(file, dict):   # FileData from some API callers
        file = file.get("path")
    return message.get("text") or "", file


def analyze_input(text: str, trace: Trace | None) -> Analysis:
    """The library's triage of a paste, a dropped file, or both (the text is the question)."""
    text_lines = lines_from_text(text) if text.strip() else []
    if trace is None or trace.file is None:
        if not text_lines:
            raise UsageError("the message is empty: paste an error trace or drop a server log file")
        return analyze_lines(text_lines)
    name = trace.file_name or Path(trace.file).name
    try:
        handle = open(trace.file, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror}; drop the file again") from exc
    with handle:
        try:
            analysis = analyze_lines(itertools.chain(text_lines, lines_from_bytes(handle)))
        except UsageError as exc:
            raise UsageError(f"{name}: {exc}") from exc
    if analysis.total_lines <= len(text_lines):
        raise UsageError(f"{name} is empty: drop the server log that contains the error")
    return analysis


def plan_query(text: str, file: str | None, session: Session) -> tuple[Analysis, Trace, str]:
    """-> (what to answer, the trace of this topic, the question as stored with feedback).

    The follow-up policy of the module docstring lives here."""
    name = Path(file).name if file else None
    if file is None and session.trace is not None and text.strip():
        alone = analyze_input(text, None)
        if alone.primary is None:   # no error of its own: ask about the earlier trace
            earlier = session.trace
            combined = Trace(text.strip() + "\n\n" + earlier.text, earlier.file, earlier.file_name)
            question = f"{text.strip()}\n\n[follow-up to]\n{_question(earlier)}"
            return analyze_input(combined.text, combined), earlier, question
        return alone, Trace(text), text
    trace = Trace(text, file, name)
    return analyze_input(text, trace), trace, _question(trace)


def _question(trace: Trace) -> str:
    return trace.text + (f"\n[log file {trace.file_name}]" if trace.file_name else "")


def page_message(exc: Exception) -> str:
    """One line for the chat. The library's hints name CLI options; say what to do on the page."""
    if isinstance(exc, AssistantError):
        text = str(exc)
        for cli, page in (("pass the log file with --log FILE", "drop the log file on the message box instead"),
                          ("pass a text log with --log FILE", "drop a text log file"),
                          ("pass a log with --log FILE", "drop a log file")):
            text = text.replace(cli, page)
        return "⚠ " + page_safe(" ".join(redact(text).split()))
    return (f"⚠ Something went wrong while answering ({type(exc).__name__}). The server log has "
            "the details; try again or rephrase the question.")


# ---- the page -------------------------------------------------------------------------------------

def mode_banner(assistant, settings: Settings) -> str:
    """Where answers come from right now (the endpoint is re-checked on every page load)."""
    llm = assistant.llm
    if llm is not None and llm.available():
        try:
            model = llm.model
        except AssistantError:
            model = "the model"
        return (f'<div class="banner llm">Answers are written by the SGLang model <b>{html.escape(model)}</b> '
                f"at {html.escape(settings.endpoint)} from the knowledge base's entries, and checked against them before "
                "they are shown.</div>")
    if llm is not None:
        why = llm.unavailable_reason or f"no SGLang server answering at {settings.endpoint}"
    elif not settings.use_llm:
        why = "the SGLang model is turned off (--no-llm or ASK_NO_LLM=1)"
    else:
        why = "no SGLang model client is available"
    return f'<div class="banner kb">Answers come from the knowledge base alone: {html.escape(why.rstrip("."))}.</div>'


def build_demo(assistant, settings: Settings, concurrency: int = DEFAULT_CONCURRENCY):
    """The Gradio Blocks app. `assistant.llm` (a client or None) decides the model's part."""
    import gradio as gr

    from assistant.feedback import FeedbackStore

    try:
        store, feedback_off = FeedbackStore(settings.feedback_db), None
    except AssistantError as exc:   # a broken feedback store must not keep the page from answering
        store, feedback_off = None, f"Feedback is off: {exc}; then restart `ask serve`."
        log.warning("%s", feedback_off)

    def llm_ready() -> bool:
        return assistant.llm is not None and assistant.llm.available()

    def respond(message, chat, session: Session):
        chat = list(chat or [])
        session = session or Session()
        text, file = read_message(message)
        file_size = os.path.getsize(file) if file and os.path.exists(file) else None
        chat.append({"role": "user", "content": question_markdown(text, file and Path(file).name, file_size)
                     or "(empty message)"})
        chat.append({"role": "assistant", "content": THINKING})
        busy_box = gr.update(value=None, interactive=False)
        yield busy_box, chat, gr.update(), gr.update(), session

        outcome: dict = {}
        tokens: queue.Queue = queue.Queue()

        def work() -> None:
            try:
                analysis, trace, question = plan_query(text, file, session)
                outcome["question"], outcome["trace"] = question, trace
                outcome["answer"] = assistant.answer(analysis, history=list(session.history),
                                                     use_llm=llm_ready(), on_token=tokens.put)
            except Exception as exc:  # noqa: BLE001 - shown as one line, logged in full
                outcome["error"] = exc
            finally:
                tokens.put(None)

        threading.Thread(target=work, name="ask-answer", daemon=True).start()
        streamed, done = [], False
        while not done:
            item = tokens.get()
            while item is not None:
                streamed.append(item)
                try:
                    item = tokens.get(timeout=STREAM_INTERVAL)
                except queue.Empty:
                    break
            done = item is None
            if streamed and not done:
                chat[-1] = {"role": "assistant", "content": WRITING + "\n\n" + page_safe("".join(streamed))}
                yield gr.update(), chat, gr.update(), gr.update(), session

        ready_box = gr.update(value=None, interactive=True)
        if "error" in outcome:
            exc = outcome["error"]
            if not isinstance(exc, AssistantError):
                log.error("answering failed", exc_info=exc)
            chat[-1] = {"role": "assistant", "content": page_message(exc)}
            yield ready_box, chat, gr.update(), gr.update(), session
            return
        answer: Answer = outcome["answer"]
        chat[-1] = {"role": "assistant", "content": answer_markdown(answer)}
        session.rateable[len(chat) - 1] = Rateable(
            uuid.uuid4().hex, outcome["question"], answer.to_json(), [m.id for m in answer.matches],
            answer.mode)
        session.history += [{"role": "user", "content": text.strip() or outcome["question"]},
                            {"role": "assistant", "content": history_text(answer)}]
        session.trace = outcome["trace"]
        yield ready_box, chat, sources_markdown(answer), detected_markdown(answer), session

    def on_like(session: Session, data: gr.LikeData):
        index = data.index if isinstance(data.index, int) else data.index[0]
        rated = (session or Session()).rateable.get(index)
        if rated is None or data.liked == "":   # an error message, or a rating taken back
            return
        rating = 1 if data.liked is True else -1
        comment = data.liked if isinstance(data.liked, str) else None
        if store is None:
            gr.Warning(feedback_off)
            return
        try:
            store.record(rated.answer_key, "web", rating, rated.question, rated.answer_json,
                         rated.matched_ids, rated.mode, comment=comment)
        except Exception as exc:  # noqa: BLE001 - a full disk must not break the page
            log.error("storing feedback failed", exc_info=exc)
            gr.Warning("Your rating could not be saved; the server log says why.")
            return
        gr.Info("Thanks: your rating is saved and helps fix the knowledge base.")

    # Gradio finds the LikeData parameter by its type; `from __future__ import annotations` made
    # the annotation a string that Gradio cannot resolve here, so give it the class itself.
    on_like.__annotations__["data"] = gr.LikeData

    def new_conversation():
        return [], Session(), sources_markdown(None), detected_markdown(None), gr.update(value=None)

    with gr.Blocks(title="ask · SGLang troubleshooting", analytics_enabled=False) as demo:
        gr.Markdown("## ask · SGLang troubleshooting\nPaste an SGLang error trace or drop a server "
                    "log: the answer shows the matched problem, the fix and its sources.")
        banner = gr.Markdown(mode_banner(assistant, settings), elem_id="mode-banner")
        if feedback_off:
            gr.Markdown("⚠ " + html.escape(feedback_off), elem_id="feedback-off")
        session = gr.State(None)   # a Session, made by the first answer
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    elem_id="chat", show_label=False, height=620, layout="bubble", autoscroll=False,
                    feedback_options=FEEDBACK_OPTIONS, buttons=["copy"],
                    placeholder="Paste a trace below, drop a log file, or click an example.")
                box = gr.MultimodalTextbox(
                    elem_id="question", show_label=False, sources=["upload"], file_count="single",
                    lines=1, max_lines=16, max_plain_text_length=PASTE_AS_FILE_CHARS,
                    placeholder="Paste the error trace (or ask a follow-up), or drop a server log…")
                examples = gr.Examples([[{"text": t, "files": []}] for _, t in EXAMPLES], inputs=[box],
                                       label="Example traces (click one to ask it)",
                                       example_labels=[label for label, _ in EXAMPLES])
                clear = gr.Button("New conversation", size="sm", variant="secondary")
            with gr.Column(scale=2):
                gr.Markdown("### Sources")
                sources = gr.Markdown(sources_markdown(None), elem_id="sources")
                gr.Markdown("### Detected in your trace")
                detected = gr.Markdown(detected_markdown(None), elem_id="detected")

        answer_io = {"fn": respond, "inputs": [box, chatbot, session], "show_progress": "hidden",
                     "outputs": [box, chatbot, sources, detected, session],
                     "concurrency_limit": concurrency, "concurrency_id": "answer"}   # one shared pool
        box.submit(**answer_io, api_name="ask")
        # a click on an example fills the box (Gradio's own event), then asks it at once
        examples.load_input_event.then(**answer_io, api_visibility="private")
        chatbot.like(on_like, [session], None, api_visibility="private")
        chatbot.change(None, None, None, js=SHOW_LATEST_ANSWER, api_visibility="private")
        for reset in (clear.click, chatbot.clear):   # the button, and the chat's own trash icon
            reset(new_conversation, None, [chatbot, session, sources, detected, box],
                  api_visibility="private")
        demo.load(lambda: mode_banner(assistant, settings), None, banner, api_visibility="private")
    demo.queue(default_concurrency_limit=concurrency)
    return demo


def launch(demo, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, block: bool = True, quiet: bool = False):
    """Serve the page: offline (system fonts, no share link, no telemetry), errors as one line."""
    import gradio as gr

    font = ["ui-sans-serif", "system-ui", "sans-serif"]   # no Google Fonts request from the page
    theme = gr.themes.Default(font=font, font_mono=["ui-monospace", "monospace"])
    return demo.launch(server_name=host, server_port=port, share=False, prevent_thread_lock=not block,
                       show_error=False, quiet=quiet, theme=theme, css=CSS, head=CONTENT_SECURITY_POLICY, max_file_size=MAX_UPLOAD,
                       footer_links=["api", "settings"], ssr_mode=False, pwa=False, mcp_server=False)


# ---- command line ----------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    from ui.options import endpoint_options, index_options

    p = argparse.ArgumentParser(prog="ask serve", description="The web UI: a chat page for SGLang "
                                "error traces and logs (answers from the KB, or the SGLang model).")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    endpoint_options(p)
    p.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY,
                   help=f"answers computed at once; more wait in the queue (default {DEFAULT_CONCURRENCY})")
    index_options(p)
    return p


def connect_llm(settings: Settings):
    """The SGLang client when the model is wanted, else None. Its availability is checked per
    answer and per page load, so a server started after the UI is picked up."""
    if not settings.use_llm:
        return None
    try:
        from assistant.llm import SGLangClient
    except ImportError:
        return None
    return SGLangClient.from_settings(settings)


def main(argv: list[str] | None = None) -> int:
    from assistant.pipeline import Assistant
    from ingest.update import ingest_kb
    from ui.options import settings_from_args

    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import gradio  # noqa: F401 - only to say what is missing before the index loads
    except ImportError as exc:
        raise UsageError("the web UI needs Gradio: pip install -e '.[ui]'") from exc
    settings = settings_from_args(args)
    if args.no_llm:
        settings = settings.with_options(use_llm=False)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    install_log_redaction()   # an exception's text can carry a key an upstream server echoed
    assistant = Assistant.from_settings(settings, progress=lambda m: print(m, file=sys.stderr),
                                        build_index=ingest_kb)
    assistant.llm = connect_llm(settings)
    demo = build_demo(assistant, settings, concurrency=args.concurrency)
    print(f"ask: the web UI is at http://{args.host}:{args.port} (Ctrl+C stops it)", file=sys.stderr)
    launch(demo, args.host, args.port, block=True, quiet=True)
    return 0


if __name__ == "__main__":
    from ui.exits import run_command

    sys.exit(run_command(lambda: main(sys.argv[1:])))
