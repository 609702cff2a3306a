"""Intent: is the paste a problem report, or a how-to / configuration question with no error?

A question ("how do I enable EAGLE speculative decoding?", "如何开启 DP attention") must never be
answered with an error fix, however close an entry's words are. A paste is a question when it holds
no error line from a log and the user's words ask how / what / which without describing a failure.
"""

from __future__ import annotations

import re

from assistant.trace import FLAG_NAME_RE

FAILURE_RE = re.compile(
    r"\b(?:errors?|exceptions?|fail(?:s|ed|ing|ure)?|crash(?:es|ed|ing)?|hangs?|hung|stuck\w*|freez\w*|"
    r"killed|oom|incorrect|out of memory|segfault|abort\w*|timed? ?out|timeouts?|refused|broken|"
    r"not work\w*|doesn'?t work|won'?t (?:start|load|run)|can(?:no|')t (?:start|load|run|connect)|"
    r"unable to|traceback|nan|garbage|wrong (?:output|result|answer)s?|slow(?:er|down)?|"
    r"degrad\w*|regression|dies|died|exit(?:s|ed)?|terminat\w*|invalid|unsupported|not supported|"
    r"mismatch\w*|leak\w*|empty (?:output|response|content|body)|returns? (?:null|none|empty)|"
    r"near zero|drop(?:s|ped)?|doubl\w*|grows?|worse|spikes?|instead of|although|even though|but\b|"
    r"no longer|anymore|after (?:upgrading|updating|the (?:upgrade|update))|stop(?:s|ped)?|unexpected\w*|weird|strange|refus\w*|reject\w*|complain\w*|"
    r"(?:is|are|was|does|do|did|ca)n[o']?t|cannot|not (?:recogni[sz]ed|found|loaded|available)|"
    r"(?:is|are|was|were|comes? back|came back|stays?) (?:empty|blank|null|none|missing)|missing|ends? up in|"
    # what the user got, shown: "content comes back like: ...", `"usage": null`; "is this a bug?"
    r"(?:comes?|came) back (?:like|as|with)|bugs?|buggy|"
    # what was tried and did nothing, output that is not what it should be
    r"chang(?:es|ed) nothing|does nothing|did nothing|(?:has|had|have|takes?|took) no effect|ignored|"
    r"stall(?:s|ed|ing)?|unstable|inconsistent|non-?deterministic|random (?:values?|outputs?|text|tokens?|results?)|"
    r"breaks?|broke|go(?:es)? wrong|went wrong|gibberish|garbled|truncat\w*|"
    # a setting that shows no effect: "the answers are exactly the base model's", "not applied"
    r"not (?:applied|used|respected|honou?red|taking effect)|(?:makes? |made )?no difference|"
    r"(?:exactly|just) (?:the same as |like )?the base model|same (?:as|outputs? as) (?:the )?base model|"
    # asking to be rid of something names it as a failure: "how do I fix 'Address already in use'?"
    r"fix(?:es|ed|ing)?|solve|resolve|get rid of|work ?around|already in use|"
    # a number the user finds bad: "why is my throughput so low?", "GPU utilization is low"
    r"(?:so|too|very|really) (?:low|high|slow|long)|"
    r"low(?:er)? (?:throughput|performance|tokens?/s|tok/s|qps|utili[sz]ation)|"
    r"(?:throughput|performance|utili[sz]ation|tok/s|tokens/s|qps) (?:is |are |was |stays? )?(?:so |too |very )?low|"
    # a count that stays at nothing, a wait measured in hours: "the cache hit rate stays zero",
    # "the first request takes more than an hour"
    r"(?:stays?|remains?|stuck at|always|still) (?:at )?(?:zero|0)|"
    r"takes? (?:more than |over |about |almost |nearly )?(?:an? |\d+ )?(?:hours?|minutes?|forever)|"
    r"(?:more|longer) than an? (?:hour|minute))\b"
    r"|['\"]\s*:\s*(?:null|None)\b"
    r"|不行|没用|无效|是空的|不返回|没有输出|没输出|重复输出|输出重复|不断重复|胡言乱语|不稳定|不一致|"
    r"随机的?(?:值|输出|结果|字符)|卡在|不兼容|"
    # the same as the English words above: "stops at", "can't connect", "killed", "get rid of", "leaks",
    # "so low / too slow / that high"
    r"停在|停住|不动了?|连不上|连接不上|连不通|被\s*kill|被杀|kill\s*掉|去掉|去除|消除|泄漏|泄露|"
    r"(?:很|太|这么|那么|非常|特别)(?:低|高|慢|长|久)|"
    # "what is going on?" about a value that stays put after an upgrade reports, it does not ask how
    r"怎么回事|咋回事|什么原因|啥原因|一直是|一直为|始终是|始终为|升级.{0,24}(?:之后|以后|后)|"
    r"报错|解决|怎么办|还是会|仍然|依然|但(?!愿)|启动时报|错误|失败|崩|卡住|卡死|超时|挂了|挂掉|异常|不工作|无法|不能启动|启动不了|乱码|变慢|掉速|内存不足|显存不足|爆显存|但是|却|不对|为空|没有返回|掉到|掉了|涨了|变差|不生效|没生效|不起作用",
    re.I)
ASKING_RE = re.compile(
    r"^\s*(?:how|what|which|when|where|why|is|are|can|could|should|does|do|will|would|any)\b(?!['’]t)|"
    r"\b(?:how (?:do|can|to|should|much|many)|what(?:'s| is| are| should)|which (?:flag|option|backend|"
    r"value|version|one)|is (?:it|there) (?:possible|a way)|best (?:way|practice|setting|value)s?|"
    r"recommend\w*|tun(?:e|ing)|configure|set up|enable|difference between|supported\?)\b|[?？]\s*$"
    r"|如何|怎么|怎样|是否|推荐|哪个|哪些|什么|能否|可以.{0,12}吗|支持.{0,12}吗|多少|区别|配置|开启|设置",
    re.I)


# a clause that names a failure the user wants to avoid, not one they have: "so huge images
# don't blow up memory", "instead of failing the whole startup", "to avoid OOM"
HYPOTHETICAL_RE = re.compile(
    r"\b(?:so(?: that)?(?! (?:low|high|slow|long)\b)|to avoid|to prevent|instead of|without|in case|rather than|so as not to)\b[^.?!;]*"
    r"|(?:以免|以防|免得|避免|防止|为了不|别让|不让)[^。？！；.?!;]*",
    re.I)
ENDS_ASKING_RE = re.compile(r"[?？]\s*$")
# a statement that a setting still has to be given by hand ("with ascend_fuseep 还需要在配置中显式加
# quantization 参数", "it still has to be passed explicitly"): what should follow from the rest does
# not, which reports a fault of the program; asked ("是否还需要加...？"), it is a how-to question
STILL_NEEDED_RE = re.compile(
    r"还(?:需要|要|得|必须)[^，。？?,.]{0,16}?(?:显式|显示|手动|手工|额外|单独|另外)[^，。？?,.]{0,4}?(?:加|添加|指定|设置|传|配置)|"
    r"\bstill (?:has|have|had|needs?|needed) to be (?:explicitly |manually )?(?:added|passed|set|specified|given)\b|"
    r"\b(?:still )?(?:has|have|had|needs?) to (?:be )?(?:explicitly|manually) (?:add|pass|set|specify|give)\w*\b", re.I)
WHY_RE = re.compile(r"\bwhy\b|为什么|为啥", re.I)
# what a question may say of its setting without reporting a failure: "doesn't fit", "isn't
# starved", "I don't need the server", "but it would with 8k" (not "can't", an ability that fails)
NEGATION_RE = re.compile(r"(?:is|are|was|does|do|did)n[o']?t|but", re.I)
# "Can't use X" states; "Can I use X" asks
OPENING_ASK_RE = re.compile(r"^\s*(?:(?:how|can|could|is|are|does|do|what|which|should|would|will)\b(?!['’]t)"
                            r"|请问|如何|怎么|怎样|能否|是否|可否|有没有办法)", re.I)


def is_question(question: str, has_log_errors: bool) -> bool:
    """True for a how-to / configuration / tuning question that reports no failure.

    `question` is the user's own words; `has_log_errors` says whether the paste has error lines
    from a log (any exception or fatal line makes it a problem report). When the words open with
    a question, a failure named only in a clause of purpose ("so X doesn't OOM") is not reported."""
    if has_log_errors or not question.strip():
        return False
    # a flag is configuration, not the user's words: `--enable-reasoning` asks nothing and
    # `--watchdog-timeout` reports nothing
    question = FLAG_NAME_RE.sub(" ", question)
    if not ASKING_RE.search(question):
        return False
    asks = OPENING_ASK_RE.match(question) or ENDS_ASKING_RE.search(question)
    if not asks and STILL_NEEDED_RE.search(question):
        return False
    words = HYPOTHETICAL_RE.sub(" ", question) if asks else question
    failures = FAILURE_RE.findall(words)
    if not failures:
        return True
    # a how / what / which question that only negates ("doesn't fit on my card", "I don't need the
    # server") sets a constraint; a "why ... doesn't" question, or any failure word, reports
    return bool(asks) and not WHY_RE.search(question) and all(NEGATION_RE.fullmatch(f) for f in failures)
