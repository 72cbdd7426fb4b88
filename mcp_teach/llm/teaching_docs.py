"""What the teaching model does with documents: answer from text in its context, or fetch some with tools.

Lesson 07 puts documents in front of the model three ways, and this module reads all three:

- **in a message** (the application read a resource, or a prompt embedded one): the text inside a
  ``<document source="docs://tools">…</document>`` block, in any message but a ``tool`` one
  (:func:`document_block` writes one; the format is this model's, a real model reads any wording);
- **as a tool result** of the *reader* tool the model itself called (below);
- **not at all**: then, if the tools allow it, the model fetches one.

The rules, all deterministic:

1. **Answer from a document** when the conversation holds one and the question shares a word with one of
   its sentences: the best-matching sentence, quoted with the document it came from
   (``From "Tools" (docs://tools): …``). Words are compared lower-case, without a plural ``s`` and without
   :data:`STOP_WORDS` (a Chinese question's words are first read as the English words of
   :data:`CHINESE_TERMS`: ``资源模板`` is ``resource template``); a sentence scores one point per distinct
   question word it contains; the first of the best sentences wins (documents in conversation order). A
   question that asks for a summary
   (``summarize``, ``summary``, ``总结``, ``概括``) gets one instead (:func:`summarize`): the first sentence of each
   paragraph, as bullet points if the question says ``bullet``, one sentence if it says ``one sentence``,
   ``tweet`` or ``280``, else one paragraph.
2. **Fetch a document** when there is no document to answer from and the tools include a *finder* and a
   *reader* (:func:`retrieval_tools`): a finder is a tool whose name has ``search``/``find``/``query`` and a
   required string parameter (``search_documents(query)``), or else a *lister*, one whose name has ``list``
   and a word like ``resources``/``documents`` and that needs no argument (``list_resources``); a reader's name
   has ``get``/``read``/``fetch``/``open`` and a word like ``document``/``resource``, and it takes one
   required string (``get_document(doc_id)``, ``read_resource(uri)``). Round 1 calls the finder with the
   question's words (or the lister); round 2 calls the reader with the first hit's ``doc_id``/``id``/``uri``
   (or the listed entry whose name, description and URI share most words with the question); round 3
   answers by rule 1 from what the reader returned, or says the document does not mention the words.
   A failed call, or a finder that found nothing, ends the turn with a sentence saying so.

3. **Look up a number, then compute** (:func:`found_number`, used by :mod:`.teaching_model` rule g, lesson 10):
   after rule 2 answered a lookup, the number the answer rests on is the first number in the best-matching
   sentence of the fetched documents that is not part of a date, a code or a word (``up to 100 values`` ->
   ``100``; ``2025-11-25`` and ``-32602`` are skipped).

Neither rule applies to a greeting or to a question without words, and :mod:`.teaching_model` tries its
arithmetic and named-tool rules first, so a conversation without documents or retrieval tools is answered
exactly as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_teach.llm import teaching_text as text
from mcp_teach.llm.teaching_tools import PastToolCall, Reply, Tool, accepts, name_words, read_result, word_set
from mcp_teach.wire.messages import json_or_none

#: A document in a message: ``<document source="...">`` text ``</document>`` (the source names it).
DOCUMENT_BLOCK = re.compile(r'<document source="([^"]*)"[^>]*>\n?(.*?)\n?</document>', flags=re.DOTALL)


#: Words that say nothing about what a question is about.
STOP_WORDS = word_set(
    """a an the is are was were be been being do does did what which who whom whose when where why how can could
    should would will shall may might of to in on at by for with about from as into and or not no it its this that
    these those there here i me my we our you your they them their he she his her if then than so get gets say says
    tell please according any some all one e g"""
)
#: A Chinese question read in the English words of the documents (they are English): the same words, the same search.
CHINESE_TERMS = {
    "服务器": "server", "服务端": "server", "客户端": "client", "主机": "host", "应用": "application",
    "模型": "model", "资源": "resource", "模板": "template", "提示词": "prompt", "提示": "prompt", "工具": "tool",
    "传输": "transport", "消息": "messages", "请求": "request", "响应": "response", "结果": "result",
    "错误": "error", "通知": "notification", "订阅": "subscribe", "补全": "completion", "采样": "sampling",
    "能力": "capabilities", "握手": "handshake", "初始化": "initialize", "协议": "protocol", "版本": "version",
    "会话": "session", "连接": "connection", "参数": "arguments", "名称": "name", "描述": "describe",
    "说明": "description", "标题": "title", "内容": "content", "文本": "text", "数据": "data", "标准": "standard",
    "输出": "output", "输入": "input", "子进程": "subprocess", "端点": "endpoint", "事件": "events", "流": "stream",
    "流式": "streamable", "方法": "method", "上下文": "context", "注解": "annotations", "弃用": "deprecated",
    "发送": "send", "返回": "returns", "读取": "read", "列出": "list", "调用": "call", "出现": "appear",
    "搜索": "search", "知识库": "knowledge base", "文档": "document", "最多": "most", "多少个": "many", "值": "values",
}  # fmt: skip
_CHINESE_TERM = re.compile("|".join(sorted(CHINESE_TERMS, key=len, reverse=True)))
#: Words that ask for a summary rather than for one fact.
SUMMARY_WORDS = ("summarize", "summarise", "summary", "总结", "概括", "摘要")
FINDER_WORDS = frozenset({"search", "find", "query", "lookup"})
LISTER_WORDS = frozenset({"list"})
READER_WORDS = frozenset({"get", "read", "fetch", "open"})
#: What a lister or reader must be about (one of these words in its name).
DOCUMENT_WORDS = frozenset({"document", "documents", "doc", "docs", "resource", "resources", "page", "pages", "file"})
#: Keys of a finder's hit that name the document, in order of preference.
ID_KEYS = ("doc_id", "id", "uri", "name")
#: How many bullet points a summary may have.
MAX_BULLETS = 5
MIN_BULLETS = 3
TWEET_LENGTH = 280

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\[\"'])")


@dataclass(frozen=True)
class Document:
    """Text the model may answer from, and where it came from (a URI, a document id)."""

    source: str
    text: str

    @property
    def title(self) -> str | None:
        """The first line's Markdown title (``# Tools`` -> ``Tools``), if it has one."""
        first = self.text.strip().split("\n", 1)[0]
        return first[2:].strip() if first.startswith("# ") else None

    def paragraphs(self) -> list[list[str]]:
        """The sentences of each paragraph, headings left out, line breaks inside a paragraph joined."""
        found = []
        for block in re.split(r"\n\s*\n", self.text.strip()):
            lines = [line.strip() for line in block.split("\n") if line.strip() and not line.lstrip().startswith("#")]
            if lines:
                found.append([s for s in _SENTENCE_END.split(" ".join(" ".join(lines).split())) if s])
        return found

    def sentences(self) -> list[str]:
        return [sentence for paragraph in self.paragraphs() for sentence in paragraph]

    def cited(self) -> str:
        """``"Tools" (docs://tools)``, or the source alone when the text has no title."""
        return f'"{self.title}" ({self.source})' if self.title else self.source


def document_block(source: str, body: str) -> str:
    """The text of a message that puts a document into the model's context, in the form rule 1 reads."""
    return f'<document source="{source}">\n{body.strip()}\n</document>'


def split_documents(message_text: str) -> tuple[list[Document], str]:
    """The documents in a message's text, and the text around them (the message without its blocks)."""
    documents = [Document(source, body) for source, body in DOCUMENT_BLOCK.findall(message_text)]
    return documents, DOCUMENT_BLOCK.sub(" ", message_text).strip()


def _stem(word: str) -> str:
    """``messages`` -> ``message``, ``describes`` -> ``describe``; ``process`` and short words stay."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(sentence: str) -> list[str]:
    """The question's words that say what it is about, in order, each once (not stemmed); Chinese words become
    their English :data:`CHINESE_TERMS`."""
    english = _CHINESE_TERM.sub(lambda match: f" {CHINESE_TERMS[match[0]]} ", sentence)
    return list(dict.fromkeys(word for word in _WORD.findall(english.lower()) if word not in STOP_WORDS))


def terms(sentence: str) -> set[str]:
    """:func:`content_words`, stemmed: what sentences are compared by."""
    return {_stem(word) for word in content_words(sentence)}


def best_sentence(question: str, documents: Sequence[Document]) -> tuple[Document, str] | None:
    """The sentence sharing most words with the question (the first on a tie), or ``None`` if none shares one."""
    wanted = terms(question)
    found = [(document, sentence) for document in documents for sentence in document.sentences()]
    best = max(found, key=lambda pair: len(wanted & terms(pair[1])), default=None)  # max keeps the first on a tie
    return best if best is not None and wanted & terms(best[1]) else None


def asks_for_summary(question: str) -> bool:
    return any(word in question.lower() for word in SUMMARY_WORDS)


def summarize(document: Document, question: str) -> str:
    """An extractive summary: each paragraph's first sentence, in the shape the question asks for."""
    paragraphs = document.paragraphs()
    firsts = [paragraph[0] for paragraph in paragraphs]
    lowered = question.lower()
    if "bullet" in lowered or "要点" in lowered:
        rest = [sentence for paragraph in paragraphs for sentence in paragraph[1:]]
        chosen = (firsts + rest[: max(0, MIN_BULLETS - len(firsts))])[:MAX_BULLETS]
        return "\n".join(f"- {sentence}" for sentence in chosen)
    if "one sentence" in lowered or "tweet" in lowered or str(TWEET_LENGTH) in lowered or "一句" in lowered:
        first = firsts[0] if firsts else ""
        return first if len(first) <= TWEET_LENGTH else first[: TWEET_LENGTH - 1] + "…"
    return " ".join(firsts[:4])


def _summarized(question: str, documents: Sequence[Document]) -> Document:
    """The document a summary is about: the one sharing most words with the question, the first on a tie."""
    wanted = terms(question)
    return max(documents, key=lambda document: len(wanted & terms(f"{document.source} {document.text}")))


def answer_from(question: str, documents: Sequence[Document], chinese: bool) -> str | None:
    """Rule 1: a summary, or the best sentence with its document; ``None`` if no sentence shares a word."""
    if asks_for_summary(question):
        document = _summarized(question, documents)
        return text.say("summary_of", chinese, document=document.cited(), summary=summarize(document, question))
    if (found := best_sentence(question, documents)) is None:
        return None
    document, sentence = found
    return text.say("from_document", chinese, document=document.cited(), sentence=sentence)


# --- Rule 2: fetching a document with tools ----------------------------------------------------------------------


@dataclass(frozen=True)
class Retrieval:
    """The two tools rule 2 uses: one that finds (or lists) documents, one that reads a document."""

    finder: Tool
    reader: Tool
    #: True if ``finder`` lists everything (``list_resources``) instead of searching.
    lists: bool = False

    def finder_arguments(self, question: str) -> dict[str, Any]:
        return {} if self.lists else {_string_parameter(self.finder): " ".join(content_words(question))}

    def reader_arguments(self, target: str) -> dict[str, Any]:
        return {_string_parameter(self.reader): target}


def _string_parameter(tool: Tool) -> str:
    return next(name for name in tool.required if accepts(tool.schema(name), "string"))


def _required_strings(tool: Tool) -> int:
    return sum(1 for name in tool.required if accepts(tool.schema(name), "string"))


def retrieval_tools(tools: Iterable[Tool]) -> Retrieval | None:
    """A finder (else a lister) and a reader among ``tools``, the first of each kind; ``None`` without both."""
    tools = list(tools)
    readers = [
        t for t in tools if name_words(t.name) & READER_WORDS and name_words(t.name) & DOCUMENT_WORDS
        and len(t.required) == 1 and _required_strings(t) == 1
    ]  # fmt: skip
    finders = [t for t in tools if name_words(t.name) & FINDER_WORDS and _required_strings(t) >= 1]
    listers = [
        t for t in tools if name_words(t.name) & LISTER_WORDS and name_words(t.name) & DOCUMENT_WORDS
        and not t.required
    ]  # fmt: skip
    if readers and finders:
        return Retrieval(finders[0], readers[0])
    return Retrieval(listers[0], readers[0], lists=True) if readers and listers else None


def _entries(found: str) -> list[Mapping[str, Any]]:
    """A finder's or lister's result as a list of objects (a JSON list, or one under ``result``/``results``)."""
    if isinstance(data := json_or_none(found), Mapping):
        data = next((data[key] for key in ("result", "results", "hits", "documents") if key in data), [])
    return [entry for entry in data if isinstance(entry, Mapping)] if isinstance(data, list) else []


def _first_hit(found: str) -> str | None:
    ids = (entry.get(key) for entry in _entries(found) for key in ID_KEYS)
    return next((value for value in ids if isinstance(value, str) and value), None)


def _best_listed(found: str, question: str) -> str | None:
    """The listed URI whose entry shares most words with the question (text resources only; first on a tie)."""
    wanted = terms(question)
    best, best_score = None, 0
    for entry in _entries(found):
        mime = str(entry.get("mime_type") or entry.get("mimeType") or "text/plain")
        if not isinstance(entry.get("uri"), str) or mime.startswith(("image/", "audio/", "video/")):
            continue
        described = " ".join(str(entry.get(key) or "") for key in ("uri", "name", "title", "description"))
        if (points := len(wanted & terms(described))) > best_score:
            best, best_score = entry["uri"], points
    return best


def content_text(content: Any) -> str:
    """The text of a ``tool`` message: a string (or the string a ``{"result": ...}`` wrapper holds), the text
    parts of a list, or the JSON of anything else."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    if not isinstance(content, str):
        return json.dumps(content, ensure_ascii=False, default=str)
    data = json_or_none(content)
    wrapped = data.get("result", data.get("structuredContent")) if isinstance(data, Mapping) else None
    return wrapped if isinstance(wrapped, str) else content


def _read_document(exchange: PastToolCall, reader: Tool) -> Document:
    source = exchange.arguments.get(_string_parameter(reader))
    return Document(str(source) if source is not None else reader.name, content_text(exchange.content))


def _reads(exchanges: Sequence[PastToolCall], retrieval: Retrieval | None) -> tuple[list[PastToolCall], list[Document]]:
    """The reader's calls that failed, and the documents the others returned."""
    read = [e for e in exchanges if retrieval and e.name == retrieval.reader.name]
    failed = [e for e in read if read_result(e.content).failed]
    return failed, [_read_document(e, retrieval.reader) for e in read if e not in failed] if retrieval else []


#: A number standing alone: not inside a date (``2025-11-25``), an error code (``-32602``) or a word (``utf8``).
_LONE_NUMBER = re.compile(r"(?<![\w./-])\d+(?:\.\d+)?(?![\w/-]|\.\d)")
#: Rule 3 found a document but no number in its best sentence.
NO_NUMBER = {
    False: "{answer} That sentence holds no number, so there is nothing to compute.",
    True: "{answer} 这句话里没有数字，所以没有可计算的。",
}


def found_number(
    question: str, documents: Sequence[Document], exchanges: Sequence[PastToolCall], tools: Sequence[Tool]
) -> float | None:
    """Rule 3: the first lone number in the sentence that answers ``question`` (from the documents in the
    conversation and those the reader tool returned); ``None`` if there is no such sentence or number."""
    _, fetched = _reads(exchanges, retrieval_tools(tools))
    found = best_sentence(question, [*documents, *fetched])
    match = _LONE_NUMBER.search(found[1]) if found else None
    return float(match.group(0)) if match else None


def respond(
    question: str,
    documents: Sequence[Document],
    exchanges: Sequence[PastToolCall],
    tools: Sequence[Tool],
    chinese: bool,
) -> Reply | None:
    """Rules 1 and 2: the answer, or one tool call, or ``None`` (neither applies)."""
    if not terms(question) and not asks_for_summary(question):
        return None
    retrieval = retrieval_tools(tools)
    failed, fetched = _reads(exchanges, retrieval)
    if documents or fetched:
        if (answer := answer_from(question, [*documents, *fetched], chinese)) is not None:
            return Reply(answer)
        if fetched:
            sources = ", ".join(document.source for document in fetched)
            words = ", ".join(content_words(question))
            return Reply(text.say("not_in_document", chinese, sources=sources, words=words))
    if retrieval is None:
        return None
    if failed:
        failure = read_result(failed[-1].content).text
        return Reply(text.say("call_failed", chinese, tool=retrieval.reader.name, text=failure))
    if not (finds := [e for e in exchanges if e.name == retrieval.finder.name]):
        return Reply(calls=((retrieval.finder.name, retrieval.finder_arguments(question)),))
    if (outcome := read_result(finds[-1].content)).failed:
        return Reply(text.say("call_failed", chinese, tool=retrieval.finder.name, text=outcome.text))
    listed = content_text(finds[-1].content)
    if (found := _best_listed(listed, question) if retrieval.lists else _first_hit(listed)) is None:
        return Reply(text.say("nothing_found", chinese, tool=retrieval.finder.name))
    return Reply(calls=((retrieval.reader.name, retrieval.reader_arguments(found)),))
