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
    "长度": "length", "分块": "chunked", "预填充": "prefill", "解码": "decode", "前缀": "prefix", "前缀缓存": "prefix cache radix",
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
    "驱动": "driver", "镜像": "docker image", "关闭": "disable off", "开启": "enable", "打开": "enable",
    "思考模式": "thinking mode enable_thinking", "不生效": "no effect ignored", "没有效果": "no effect ignored",
    "无效": "no effect ignored", "面板": "dashboard grafana", "看板": "dashboard grafana", "泄漏": "leak",
    "泄露": "leak", "显存不足": "out of memory OOM", "爆显存": "out of memory OOM", "找不到": "not found",
    "不支持": "not supported unsupported", "下载": "download", "代理": "proxy", "证书": "certificate ssl",
    "权限": "permission denied", "挂掉": "crash died", "挂了": "crash died", "死锁": "deadlock hang",
    "吞吐": "throughput", "延迟": "latency", "首字": "ttft first token", "重复": "repetition repeated",
    "截断": "truncated", "视频": "video", "音频": "audio", "语音": "audio speech", "节点": "node",
    "通信": "communication nccl", "集群": "cluster", "昇腾": "ascend npu", "摩尔线程": "musa moore threads",
    "海光": "hygon dcu", "精度下降": "accuracy drop", "准确率": "accuracy", "不一致": "mismatch inconsistent",
}


def english_terms(text: str, report: bool = False) -> str:
    """The English terms of the Chinese SGLang words a text holds, space-separated ("" for none);
    with `report`, also the words for what failed and how (for retrieval, not for flag look-up)."""
    pairs = [*GLOSSARY.items(), *(REPORT_WORDS.items() if report else ())]
    return " ".join(dict.fromkeys(en for zh, en in pairs if zh in text))

