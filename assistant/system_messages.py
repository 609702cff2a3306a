"""System messages printed in a Chinese locale, read as the C locale prints them.

SGLang's own errors are English, but the shell, the C library, the compiler and the linker speak
the machine's locale: on a zh_CN host a load the kernel killed ends in `已杀死`, a crash in `段错误
（核心已转储）`, a JIT build in `致命错误：cuda_fp8.h：没有那个文件或目录`, a missing binary in
`nvcc: 未找到命令`. An entry's error lines are written as the C locale prints them, so such a line
matched nothing. `in_c_locale(line)` puts the C locale's words back where a translation stands,
and full-width punctuation back to ASCII, for matching and classifying only: the user's line is
still shown as they pasted it.

The translations are those of the zh_CN and zh_TW catalogues of glibc 2.36 (strerror, strsignal,
the dynamic loader), bash 5.2, coreutils 9.1, GCC 12 and binutils 2.40 as Debian 12 ships them.
Two-character words that also occur in plain Chinese prose (zh_TW's `中止`, `終止`) are left out.
"""

from __future__ import annotations

import re
from functools import lru_cache

# (localized, as the C locale prints it)
_MESSAGES = (
    # glibc strerror / strsignal, zh_CN
    ("没有那个文件或目录", "No such file or directory"),
    ("无法打开共享对象文件", "cannot open shared object file"),
    ("载入共享库时出错", "error while loading shared libraries"),
    ("权限不够", "Permission denied"),
    ("拒绝连接", "Connection refused"),
    ("地址已在使用", "Address already in use"),
    ("设备上没有空间", "No space left on device"),
    ("已杀死", "Killed"),
    ("段错误", "Segmentation fault"),
    ("无法分配内存", "Cannot allocate memory"),
    ("打开的文件过多", "Too many open files"),
    ("连接超时", "Connection timed out"),
    ("网络不可达", "Network is unreachable"),
    ("没有到主机的路由", "No route to host"),
    ("总线错误", "Bus error"),
    ("已放弃", "Aborted"),
    ("已中止", "Aborted"),
    ("连接被对方重设", "Connection reset by peer"),
    ("断开的管道", "Broken pipe"),
    ("资源暂时不可用", "Resource temporarily unavailable"),
    ("设备或资源忙", "Device or resource busy"),
    ("输入/输出错误", "Input/output error"),
    ("不允许的操作", "Operation not permitted"),
    ("未知的名称或服务", "Name or service not known"),
    ("名称或服务未知", "Name or service not known"),
    ("域名解析暂时失败", "Temporary failure in name resolution"),
    ("域名解析出现暂时性错误", "Temporary failure in name resolution"),
    ("超出磁盘限额", "Disk quota exceeded"),
    ("非法指令", "Illegal instruction"),
    ("浮点数例外", "Floating point exception"),
    ("浮点异常", "Floating point exception"),
    ("已终止", "Terminated"),
    ("只读文件系统", "Read-only file system"),
    ("传输端点尚未连接", "Transport endpoint is not connected"),
    ("无法指定被请求的地址", "Cannot assign requested address"),
    ("不支持的操作", "Operation not supported"),
    # bash, zh_CN
    ("（核心已转储）", " (core dumped)"),
    ("(核心已转储)", "(core dumped)"),
    ("未找到命令", "command not found"),
    # GCC and binutils, zh_CN
    ("致命错误：", "fatal error: "),
    ("错误：", "error: "),
    ("警告：", "warning: "),
    ("附注：", "note: "),
    ("编译中断。", "compilation terminated."),
    ("找不到", "cannot find"),
    # glibc, bash, GCC, zh_TW
    ("沒有此一檔案或目錄", "No such file or directory"),
    ("無法開啟共用物件", "cannot open shared object file"),
    ("拒絕不符權限的操作", "Permission denied"),
    ("連線被拒絕", "Connection refused"),
    ("位址已經有在使用", "Address already in use"),
    ("裝置上已無多餘空間", "No space left on device"),
    ("強制結束", "Killed"),
    ("程式記憶體區段錯誤", "Segmentation fault"),
    ("無法配置記憶體", "Cannot allocate memory"),
    ("開啟太多檔案", "Too many open files"),
    ("連線超過時間", "Connection timed out"),
    ("無法接觸網路", "Network is unreachable"),
    ("找不到通往該主機的路由路徑", "No route to host"),
    ("匯流排錯誤", "Bus error"),
    ("連線被對方重設", "Connection reset by peer"),
    ("管線損壞", "Broken pipe"),
    ("解析名稱時發生暫時性錯誤", "Temporary failure in name resolution"),
    ("無效指令", "Illegal instruction"),
    ("唯讀的檔案系統", "Read-only file system"),
    (" (核心已傾印)", " (core dumped)"),
    ("指令找不到", "command not found"),
    ("嚴重錯誤：", "fatal error: "),
    ("錯誤：", "error: "),
    ("編譯終止。", "compilation terminated."),
)
# messages with an argument inside: bash's `第 19 行：`, ld's `对‘cuInit’未定义的引用`, GCC's
# `ld 返回 1`
_PATTERNS = (
    (re.compile(r"第 (\d+) [行列]："), r"line \1: "),
    (re.compile(r"对‘([^’]*)’未定义的引用"), r"undefined reference to `\1'"),
    (re.compile(r"ld (?:返回|回傳) (\d+)"), r"ld returned \1 exit status"),
)
_PUNCTUATION = str.maketrans({"：": ": ", "，": ", ", "（": " (", "）": ") ", "；": "; "})
# longest first: `致命错误：` before `错误：`
_MESSAGE_RE = re.compile("|".join(re.escape(zh) for zh, _ in sorted(_MESSAGES, key=lambda m: -len(m[0]))))
_IN_C = dict(_MESSAGES)
_CJK_RE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def in_c_locale(line: str) -> str:
    """The line with the translated system messages in it as the C locale prints them (the line
    itself when it has no Chinese character: nearly every line of a log)."""
    if line.isascii() or not _CJK_RE.search(line):   # isascii() is one flag in CPython's string
        return line
    return _translated(line)


@lru_cache(maxsize=4096)
def _translated(line: str) -> str:
    line = _MESSAGE_RE.sub(lambda m: _IN_C[m.group(0)], line)
    for pattern, c_locale in _PATTERNS:
        line = pattern.sub(c_locale, line)
    return line.translate(_PUNCTUATION)
