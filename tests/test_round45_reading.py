"""Round 45, reading what the paste holds: a model name or checkpoint path that says `finetuned`
names what was trained before, not a training job running now, so the answer is not capped at a
lead as if SGLang ran inside a trainer."""

from __future__ import annotations

ERROR = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
QUOTED = ('Getting the warning "Request length is longer than the KV cache pool size or the max context '
          'length. Truncated" although I set context_length=8192 for the server.\n')


def test_a_finetuned_model_name_is_not_a_training_job(assistant):
    for model in ("someorg/Qwen2.5-32B-Instruct-finetuned-AWQ", "/ckpt/finetuned/qwen2-7b"):
        answer = assistant.answer(f"{QUOTED}model: {model}\n")
        assert answer.outcome == "fix", (model, answer.outcome)
        assert answer.matches[0].id == "context-length-exceeded"


def test_a_trainer_log_still_reads_as_a_training_job(assistant):
    paste = ("$ torchrun --nproc-per-node 8 finetune_qwen.py --lr 1e-5\n"
             "Traceback (most recent call last):\n"
             '  File "/work/finetune_qwen.py", line 88, in <module>\n'
             "    trainer.train()\n"
             f"{ERROR}\n")
    assert assistant.answer(paste).outcome != "fix"
