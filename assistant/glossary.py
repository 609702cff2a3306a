"""Glossary: the SGLang vocabulary operators write in Chinese, with the English words SGLang's
flags, help texts, log lines and the KB's entries use for it.

The embedding model and the KB's words are English; a question written in Chinese ("返回的
content 是 null", "如何开启投机解码") reaches them through these terms: the flag reference reads a
how-to question with them, and retrieval adds them to a Chinese paste's query.
"""

from __future__ import annotations

GLOSSARY = {
    "投机": "speculative", "推测解码": "speculative", "草稿": "draft", "量化": "quantization",
    "显存": "memory", "内存": "memory", "张量并行": "tensor parallel tp", "流水线并行": "pipeline parallel pp",
    "数据并行": "data parallel dp", "专家并行": "expert parallel ep moe", "上下文": "context",
    "长度": "length", "分块": "chunked", "预填充": "prefill", "解码": "decode", "前缀": "prefix radix",
    "缓存": "cache", "多机": "nodes nnodes dist", "多节点": "nodes nnodes dist", "端口": "port",
    "日志": "log", "工具调用": "tool call parser", "函数调用": "tool call parser", "思考": "reasoning",
    "推理解析": "reasoning parser", "结构化输出": "grammar backend", "注意力": "attention",
    "后端": "backend", "批": "batch", "并发": "running requests", "超时": "timeout",
    "指标": "metrics", "监控": "metrics", "分离": "disaggregation", "编译": "compile",
    "种子": "seed", "模型路径": "model path", "多模态": "multimodal", "图片": "image",
    "视觉": "multimodal vision", "嵌入": "embedding", "权重": "weights load", "卸载": "offload",
    "分层": "hierarchical hicache", "路由": "router", "密钥": "api key", "采样": "sampling",
    "聊天模板": "chat template", "模板": "template", "最大": "max", "精度": "dtype",
    "数据类型": "dtype", "确定性": "deterministic", "看门狗": "watchdog", "健康检查": "health",
    "令牌": "tokens", "分词": "tokenizer", "适配器": "lora adapter",
}
# what Chinese reports say of a failure, in the words the KB's symptoms use (not flag words)
REPORT_WORDS = {
    "报错": "error", "错误": "error", "启动": "startup launch", "崩溃": "crash", "崩了": "crash",
    "卡住": "hang stuck", "卡死": "hang stuck", "乱码": "garbled output", "变慢": "slow", "很慢": "slow",
    "部署": "deploy serve", "返回": "returns response", "为空": "empty null", "是 null": "null",
    "空的": "empty", "输出": "output", "回答": "answer content", "请求": "request", "流式": "streaming stream",
    "多轮": "multi-turn", "安装": "install pip", "版本": "version", "升级": "upgrade", "加载": "load loading",
    "显卡": "gpu", "单卡": "single gpu", "多卡": "multi gpu tensor parallel", "容器": "container docker",
}


def english_terms(text: str, report: bool = False) -> str:
    """The English terms of the Chinese SGLang words a text holds, space-separated ("" for none);
    with `report`, also the words for what failed and how (for retrieval, not for flag look-up)."""
    pairs = [*GLOSSARY.items(), *(REPORT_WORDS.items() if report else ())]
    return " ".join(dict.fromkeys(en for zh, en in pairs if zh in text))

