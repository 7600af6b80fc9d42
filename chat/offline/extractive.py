"""`ExtractiveAnswerer`: the offline answer — evidence sentences that answer the question, each cited.

Shaped by what was asked: facts (the best sentences, table rows with their header), which things (the list whose
lead line names them), a comparison (one section per side), how-to (the source's numbered steps in order) or the
summary of a selected document (each section's lead sentence). Headings, titles and sentences from chunks far
below the best one are never quoted.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import snowballstemmer

from chat.citations import REF, split_sentences
from chat.offline.amounts import amounts, holds
from chat.types import AnswerShape
from chat.value_kinds import asked_kind, states
from docmind.bilingual import OWN_WORDS_FOUND
from docmind.crosslingual import LanguageMeans
from docmind.embeddings import Embedder
from docmind.language import is_chinese
from docmind.prompts.answer import named_words
from docmind.text import (
    ANSWER_STOP_WORDS,
    MARKDOWN_TABLE_ROW,
    MARKDOWN_TABLE_RULE,
    STOP_WORDS,
    Term,
    char_bigrams,
    coverage,
    faq_pair,
    in_vocabulary,
    names_in,
    plain_headings,
    salient_terms,
    says,
    title_only,
    words,
)
from kb.retrieval.types import ScoredChunk
from memory.style import AnswerStyle

LEAD_ZH = "以下内容摘自知识库（离线抽取模式）："
LEAD_EN = "The following is quoted from the knowledge base (offline extractive mode):"
LEAD_LOW_ZH = "以下内容摘自知识库（离线抽取模式），与问题的相关性偏低，请谨慎参考："
LEAD_LOW_EN = ("The following is quoted from the knowledge base (offline extractive mode); "
               "it matches the question only weakly, so please verify it:")
# The low-relevance label when it is known why: words the question asks about that the quoted documents never say.
LEAD_UNSAID_ZH = "以下内容摘自知识库（离线抽取模式），但其中没有提到{words}，请谨慎参考："
LEAD_UNSAID_EN = ("The following is quoted from the knowledge base (offline extractive mode), but it never mentions "
                  "{words}, so please verify it:")
NO_EVIDENCE_ZH = "知识库中没有找到与这个问题相关的内容。可以换个问法，或上传相关文档后再试。"
NO_EVIDENCE_EN = ("I found nothing in the knowledge base about this question. "
                  "Try rephrasing it, or upload a relevant document.")

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_ENGLISH_STEMMER = snowballstemmer.stemmer("english")
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_MARKUP = re.compile(r"^[\s#>*\-•|]+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_STEP = re.compile(r"^\s*(\d{1,2})[.)、．]\s*(\S.*)$")
_NON_WORD = re.compile(r"\W+")
# A sentence that opens by pointing back ("因此…", "他在…", "These…") leans on the one before it: the cause, the
# subject or the list it continues. Quoting it without that sentence drops what it refers to.
_POINTS_BACK = re.compile(r"^(?:因此|因而|所以|故|于是|从而|由此|这|此|该|其|它|牠|他|她|彼|并|且|而|但|然而|"
                          r"不过|此外|另外|同时|后来|之后|随后|最终|其中|包括|例如|如|即|亦|也|又|还|"
                          r"(?:this|these|that|those|it|its|they|their|he|she|his|her|so|thus|therefore|hence|"
                          r"however|but|also|then|later)\b)", re.IGNORECASE)
# How many neighbouring sentences one quoted sentence may pull in through such references, each way: kept small so
# a chain of sentences that each point back cannot turn one quote into the whole paragraph.
CONTINUATION = 2
# Brackets and quotation marks a sentence terminator inside them does not end ("《卡拉OK.LIVE！‧台北‧我》",
# "称：“文章者…也。与山水近…”"): the split piece is merged with the next ones until they close (at most
# OPEN_SPAN pieces), so a quote never stops mid-title or mid-quotation.
_PAIRS = {"《": "》", "（": "）", "(": ")", "“": "”", "「": "」", "『": "』", "【": "】"}
# Pieces one open bracket or quotation mark may join; beyond them the mark is taken as unclosed in the source.
OPEN_SPAN = 4
# How much the expected shape of the fact (a number for "多少", a date for "何时"…) and a partly shared word (体重 →
# "约只有8公斤重") add to a sentence's match with the question's words. They decide which sentences are quoted, never
# how many: that stays the number of sentences the question's words alone carry above the floor.
# A fifth of a sentence matching the whole question: it settles near-ties, small against sharing more of its words.
SHAPE_BONUS = 0.2
# Question words that a heading listing several things names (婚假、产假与陪产假) count half: enough to pick the clause.
NAMED_CLAUSE = 0.5
# The same fifth as SHAPE_BONUS, for the same reason: a paraphrase's shared characters only break near-ties.
PARTIAL_BONUS = 0.2
# A sentence saying on average this share of the characters of each asked-about word is quoted even when no sentence
# has a whole one ("本鱼体呈银灰色" for "身体是什么颜色").
# 0.5: one character of each two-character asked-about word, as "体呈银灰色" keeps 体 of 身体 and 色 of 颜色.
PARTIAL_QUOTE = 0.5
# A quoted sentence with fewer meaningful characters than this rarely states a whole fact ("产妇症状为高热。"): the
# sentence after it in the same chunk is quoted with it when that one bears on the question too (shares a word, part
# of one, or the shape of the fact asked for).
SHORT_QUOTE = 20
# At most this many sentences of a chunk in another language are embedded to choose the quote (see
# `ExtractiveAnswerer._across_languages`): a chunk is a few paragraphs, and each costs an embedding.
MAX_EMBEDDED = 24
# How many of those sentences are quoted, closest first. Across languages the embedding tells a clause from its
# neighbour poorly (a deadline from the one beside it): on the development corpus's tune half the closest sentence
# held the answer for 0.41 of the cross-language questions, one of the two closest for 0.56. Such an answer is
# always labelled low, so the reader sees both and judges.
CROSS_LANGUAGE_QUOTES = 2
# Sentences shorter than this (meaningful characters) are headings or fragments, not answers.
MIN_SENTENCE_CHARS = 6
# Two list items are the same clause for different cases when this share of their text, numbers left out, is alike
# (difflib's ratio): "满1年不满10年…5天" and "满20年…15天" are 0.91 alike. Of the pairs of items within one chunk of
# the development corpus, the 15 of 405 that reach it are all cases of one rule or rows of one table; rows whose own
# cells are longer fall below it, so it errs towards quoting the one item.
SAME_FRAME = 0.75
# Scores closer than this are a tie: what the question asks cannot tell the two apart.
TIE = 1e-6
_NUMBERS = re.compile(r"[0-9〇零一二两三四五六七八九十百千万亿]+")
_BREAKS = re.compile(r"[。！？!?；;\n]+")
# A list item or a labelled line ("E2: The fan motor is blocked. Switch the purifier off…", "婚假：…", a label of up to
# three words: "P1 (critical): … Response within 15 minutes.") is one clause of the document, up to this many
# meaningful characters: quoted whole, never in part and never glued to a sentence of the next item. Other lines
# (running prose) are quoted sentence by sentence.
CLAUSE_CHARS = 200
_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)、．]|[一二三四五六七八九十]+、|\(\d{1,2}\))\s+|"
                   r"^\s*(?=[^:：]{1,24}[:：])[^\s:：。.，,]+(?:\s[^\s:：。.，,]+){0,2}[:：]\s*\S")
# A question-and-answer pair of an FAQ (`docmind.text.faq_pair`): the question line says what the
# answer is about in the asker's own words, so it matches a question best, yet alone it answers nothing. It is quoted
# with its answer, whole up to twice a clause's length, else with the answer's first sentence (the rest of a long
# answer is quoted sentence by sentence).
FAQ_ANSWER_CLAUSES = 2
# A question asking for several things ("会上定了哪些待办事项？", "What are the supported systems?"): its answer is
# a list of the document's when one is introduced by a line naming what the question asks.
_ASKS_LIST = re.compile(r"哪些|哪几[个项条种类]|有什么|都有|\bwhat are\b|\bwhich\b.+\bare\b|\blist\b", re.IGNORECASE)
# The list's lead line (a heading, or a line ending in a colon) says at least this share of what the question asks
# about (its content words beyond the document title, in part or whole, as `_partial` counts): half, so one of two
# asked-about words (待办事项 under "四、待办事项", not 会上) is enough and a lead about something else is not.
LIST_LEAD = 0.5
# A list item: a bullet, a number or a Chinese ordinal opening the line.
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)、．]|[一二三四五六七八九十]+、|\(\d{1,2}\)|（\d{1,2}）)\s*\S")
# At most this many items of one list are quoted.
LIST_ITEMS = 12
# At most this many sentences under a remembered short-answer preference, against max_sentences' default of 5.
SHORT_SENTENCES = 2
# At least this many under a detailed-answer preference: as many as a summary quotes (summary_sentences' default).
DETAILED_SENTENCES = 8
_STYLE_ZH = {"short": "简洁回答", "detailed": "详细回答", "en": "用英文回答（引文保持原文语言）", "zh": "用中文回答"}
_STYLE_EN = {"short": "short answers", "detailed": "detailed answers",
             "en": "answers in English (quotes stay in the documents' language)", "zh": "answers in Chinese"}


def memory_note(style: AnswerStyle | None, applied: Sequence[str], zh: bool) -> str:
    """Says which remembered preference shaped the answer, and which remembered facts a personal question used.

    Each note is one parenthesised aside without sentence breaks, so citation coverage (which counts
    claims) does not mistake it for an uncited claim."""
    parts: list[str] = []
    if style is not None and style.applies:
        names = _STYLE_ZH if zh else _STYLE_EN
        wanted = [names[v] for v in (style.brevity, style.language) if v]
        quoted = "、".join(f"“{_aside(s)}”" for s in style.sources)
        parts.append(f"（已按你记住的偏好作答：{'、'.join(wanted)}，来自记忆{quoted}）" if zh else
                     f"(Applied your remembered preference: {' and '.join(wanted)}, from memory {quoted})")
    facts = [_aside(a) for a in applied if style is None or a not in style.sources]
    if facts:
        parts.append(f"（结合你的情况，我记得：{'、'.join(facts)}，以上摘录未据此改写）" if zh else
                     f"(About your situation I remember: {' / '.join(facts)} — the quotes above are not adapted to it)")
    return "\n\n" + "\n".join(parts) if parts else ""


def _aside(text: str) -> str:
    return _BREAKS.sub(" ", text).strip()


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """An English word's stem (Snowball), so that "returned" says "return" and "items" says "item"; a word with a digit
    or of three letters or fewer (a code, an acronym) as it is."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    return _ENGLISH_STEMMER.stemWord(word)


def terms(text: str) -> dict[str, float]:
    """Weighted match terms: jieba words (1.0, English ones by their stem) and CJK character bigrams (0.5), stop words
    dropped."""
    lowered = text.lower()
    found: dict[str, float] = {}
    # Accurate mode, not the search-mode `tokens`: its sub-words (泡泡 in 泡泡堂) would weigh one match twice.
    for word in words(lowered):
        word = word.strip()
        if word and word not in ANSWER_STOP_WORDS and (len(word) > 1 or _CJK_RUN.fullmatch(word) is None
                                                       and word.isalnum()):
            found[_stem(word)] = 1.0
    for word in _LATIN_WORD.findall(lowered):
        if word not in ANSWER_STOP_WORDS:
            found.setdefault(_stem(word), 1.0)
    for run in _CJK_RUN.findall(lowered):
        # Bigrams catch matches jieba splits differently in question and evidence.
        for gram in char_bigrams(run):
            found.setdefault(gram, 0.5)
    return found


def _cited(text: str, index: int) -> str:
    # Chinese punctuation takes the marker directly; Latin text reads better with a space.
    return f"{text}[{index}]" if _CJK_RUN.search(text[-2:]) or text.endswith(("。", "！", "？", "；")) \
        else f"{text} [{index}]"


@dataclass(frozen=True)
class _Shape:
    """A kind of fact a question asks for, and what a sentence stating such a fact looks like."""

    asks: re.Pattern[str]
    holds: re.Pattern[str]


_SHAPES = (
    # An amount, a size or a count: the answer holds a number.
    _Shape(re.compile(r"多少|几[个种次年位名岁人天条所座家项倍级本册台部张件套间辆只块门节]|多[大长高重远久宽深厚]|体重|"
                      r"重量|面积|人口|长度|高度|宽度|深度|数量|价格|金额|比例|"
                      r"how (?:many|much|long|tall|big|far|old|heavy)", re.IGNORECASE),
           re.compile(r"\d|[一二两三四五六七八九十百千万亿]+[多余]?[个名人年月日天岁次种座所家条位元米里斤克吨倍级本册台部张件套间辆只块门节]")),
    # A date or a period.
    _Shape(re.compile(r"什么时候|何时|哪一?年|哪个?朝代?|哪个?时期|年代|日期|时间|\bwhen\b|what year", re.IGNORECASE),
           re.compile(r"\d{1,4}年|\d{1,2}月|[〇一二三四五六七八九十]+年|世纪|年代|年间|[朝代]|时期|\b1\d{3}\b|\b20\d{2}\b")),
    # A place.
    _Shape(re.compile(r"哪里|哪儿|何处|什么地方|哪个?地[方区]|哪些地[方区]|在哪|位于|分布|\bwhere\b", re.IGNORECASE),
           re.compile(r"位于|分布|坐落|[省市县区州岛洲镇乡村]|\b(?:in|at|near)\b")),
    # Another name.
    _Shape(re.compile(r"别名|别称|又名|又称|俗称|俗名|简称|原名|本名|名字|名称|叫什么|称号|外号|"
                      r"also known|other names?", re.IGNORECASE),
           re.compile(r"又名|又称|别名|别称|俗称|俗名|简称|原名|本名|亦作|亦称|或称|也称|称为|名为|称作|名叫|"
                      r"also known|called", re.IGNORECASE)),
)
# Interrogatives and their parts: never part of what the answer says.
ASKING = re.compile(r"什么|哪|几|多少|怎|如何|为何|吗|呢|谁")


def _unclosed(text: str) -> bool:
    return any(text.count(opening) > text.count(closing) for opening, closing in _PAIRS.items())


def _join(text: str, piece: str) -> str:
    # Latin sentences were split after ". " / "! ": the space goes back; Chinese ones never had one.
    return f"{text} {piece}" if text.endswith((".", "!", "?")) and piece[:1].isascii() else text + piece


def _closed(pieces: Sequence[str]) -> list[str]:
    """Sentences whose brackets and quotation marks close: a piece cut inside a title or a quotation is joined
    with the pieces after it until they close (OPEN_SPAN pieces at most; an unclosed mark in the source then
    leaves the pieces as they were)."""
    out: list[str] = []
    i = 0
    while i < len(pieces):
        text, end = pieces[i], i + 1
        if OPEN_SPAN > 1 and _unclosed(text):
            joined = text
            for j in range(i + 1, min(len(pieces), i + OPEN_SPAN)):
                joined = _join(joined, pieces[j])
                if not _unclosed(joined):
                    text, end = joined, j + 1
                    break
        out.append(text)
        i = end
    return out


_CELL_BORDER = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str] | None:
    """The cells of a Markdown table row, or None when the line is not one; a "|" inside a cell is written "\\|"
    (kb.ingestion.parsers.tables.markdown_row)."""
    row = MARKDOWN_TABLE_ROW.match(line)
    return [cell.strip().replace("\\|", "|") for cell in _CELL_BORDER.split(row.group(1))] if row else None


def _table_row(header: Sequence[str], cells: Sequence[str]) -> str:
    """A table row read with its header, as a sentence of the document: "期限：签收之日起7天内；条件：…" — a cell
    alone ("7天内") does not say what it is the value of, and the question names the column, not the cell."""
    zh = is_chinese(" ".join((*header, *cells)))
    pairs = [f"{name}{'：' if zh else ': '}{cell}" if name and name != cell else cell
             for name, cell in zip(header, cells, strict=True) if cell]
    return ("；" if zh else "; ").join(pairs) + ("。" if zh else ".")


def _row_label(row: str) -> str:
    """A quoted table row's first cell (with its column name), which names the row: see `_table_row`."""
    return re.split(r"；|; ", row, maxsplit=1)[0]


class _Unit(NamedTuple):
    text: str
    # A table row: its own cells, and its table's column names, which every row of the table repeats.
    row: bool = False
    cells: str = ""
    header: str = ""
    # A line of the document taken whole: a list item, a labelled line or a table row (not a sentence of a paragraph).
    item: bool = False


def _record(line: str, columns: Sequence[str]) -> tuple[str, str] | None:
    """A spreadsheet row as the sheet parser writes it ("city: Chengdu; office_manager: 王小明; headcount: 112",
    kb.ingestion.parsers.sheets) under its header line ("city | office_manager | headcount"): its own values and
    its column names, or None when the line is not one (every label must be a column of that header)."""
    labels, values = [], []
    for pair in line.split("; "):
        label, sep, value = pair.partition(": ")
        if not sep or label not in columns:
            return None
        labels.append(label)
        values.append(value)
    return " ".join(values), " ".join(labels)


def _units(content: str) -> list[_Unit]:
    """What can be quoted, in order: a list item or labelled line whole (one clause of the document), a table or
    spreadsheet row with its header, the sentences of any other line one by one; headings, marked up or plain,
    and a table's header row alone are not."""
    out: list[_Unit] = []
    if title_only(content):
        return out
    headings = plain_headings(content)  # context, as a marked-up heading is: never a quote of its own
    lines = content.splitlines()
    header: list[str] | None = None
    columns: list[str] = []  # the header line of a spreadsheet's rows ("a | b | c"), once one is seen
    answered: set[int] = set()  # an FAQ's answer lines, quoted with their question
    for i, line in enumerate(lines):
        record = _record(line.strip(), columns) if columns else None
        if record is not None:
            out.append(_Unit(line.strip(), True, *record, item=True))
            continue
        cells = _cells(line)
        if cells is None and " | " in line:
            columns = [c.strip() for c in line.split(" | ")]
        if cells is not None:
            if MARKDOWN_TABLE_RULE.match(line):
                continue
            if i + 1 < len(lines) and MARKDOWN_TABLE_RULE.match(lines[i + 1]):
                header = cells
            elif header is not None and len(header) == len(cells):
                out.append(_Unit(_table_row(header, cells), True, " ".join(cells), " ".join(header), item=True))
            else:
                text = " | ".join(c for c in cells if c)
                out.append(_Unit(text, True, text, item=True))
            continue
        header = None
        if not line.strip() or i in headings or i in answered:
            continue
        answer = _faq_answer(lines, i)
        if answer is not None:
            answered.add(answer)
            out.extend(_faq_units(line.strip(), lines[answer].strip()))
            continue
        if _HEADING.match(line) or _ITEM.match(line) and len(_key(line)) <= CLAUSE_CHARS:
            out.append(_Unit(line.strip(), item=True))
        else:
            out.extend(_Unit(sentence) for sentence in _closed(split_sentences(line, clauses=False)))
    return out


def _faq_answer(lines: Sequence[str], i: int) -> int | None:
    """The index of the answer line of an FAQ question at line i (the next non-blank line, marked as an answer)."""
    following = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
    return following if following is not None and faq_pair(lines[i], lines[following]) else None


def _faq_units(question: str, answer: str) -> list[_Unit]:
    """An FAQ pair as quotable units: the question with its whole answer, or with the first sentence of a long one."""
    if len(_key(answer)) <= FAQ_ANSWER_CLAUSES * CLAUSE_CHARS:
        return [_Unit(f"{question} {answer}", item=True)]
    first, *rest = _closed(split_sentences(answer, clauses=False)) or [answer]
    return [_Unit(f"{question} {first}", item=True), *(_Unit(sentence) for sentence in rest)]


def quotable(content: str) -> list[str]:
    """What the offline answer can quote of a chunk, in order (`_units`): its sentences, list items and labelled
    lines whole, and each table row read with its header ("金额（元）：86,400"); never a heading."""
    return [unit.text for unit in _units(content) if not _HEADING.match(unit.text)]


def _lists(content: str, section: str = "") -> list[tuple[str, list[str]]]:
    """The lists of a chunk, each with its lead line: runs of list items (blank lines between them allowed) and the
    non-blank line right above the run when it is a heading (marked up or plain) or ends in a colon; `section` (the
    chunk's own section heading) leads a list that opens the chunk."""
    lines = content.splitlines()
    headings = plain_headings(content)
    out: list[tuple[str, list[str]]] = []

    def item(j: int) -> bool:  # "四、待办事项" standing alone above its items is their heading, not an item
        return bool(_LIST_ITEM.match(lines[j])) and j not in headings

    i = 0
    while i < len(lines):
        if not item(i):
            i += 1
            continue
        start, items = i, []
        while i < len(lines) and (item(i) or not lines[i].strip()):
            if lines[i].strip():
                items.append(lines[i].strip())
            i += 1
        above = next((j for j in range(start - 1, -1, -1) if lines[j].strip()), None)
        if above is not None and (above in headings or _HEADING.match(lines[above])
                                  or lines[above].rstrip().endswith((":", "："))):
            out.append((_MARKUP.sub("", lines[above]).strip(), items))
        elif above is None and section:
            out.append((section, items))
    return out


_CODE = re.compile(r"(?<![a-z0-9])([a-z]{1,3})[-\s]?(\d{1,4})(?![0-9])", re.IGNORECASE)


def codes(text: str) -> set[tuple[str, str]]:
    """Codes such as error codes, priorities or models ("E2", "P1", "R5"): (letters, digits), lower-cased."""
    return {(a.lower(), d) for a, d in _CODE.findall(text)}


def _other_code(asked: set[tuple[str, str]], text: str) -> bool:
    """The text names another code of the kind asked about and not the asked one ("E3: …" for "what is E2"): it
    is about something else, however many other words it shares with the question."""
    if not asked:
        return False
    found = codes(text)
    if found & asked:
        return False
    prefixes = {a for a, _ in asked}
    return any(a in prefixes for a, _ in found)


def _shapes(question: str) -> tuple[_Shape, ...]:
    """The shapes of fact the question asks for; with the kind of value it names (`chat.value_kinds`: a weight, a
    date, a count in 台…), a sentence stating a value of that kind fits better than one holding any number."""
    shapes = tuple(shape for shape in _SHAPES if shape.asks.search(question))
    kind = asked_kind(question)
    return (*shapes, _Shape(kind.asked, kind.stated)) if kind is not None else shapes


def _shape_fit(shapes: Sequence[_Shape], text: str) -> float:
    """Share of the asked-for kinds of fact that the sentence has the shape of."""
    return sum(1 for shape in shapes if shape.holds.search(text)) / len(shapes) if shapes else 0.0


def _aspects(question: str, named: str) -> list[str]:
    """The question's content words that its chunk's title and heading do not name, single characters included
    ("花", "根"): what the question asks about the subject."""
    out = []
    for word in words(question.lower()):
        word = word.strip()
        if (not word or word in ANSWER_STOP_WORDS or word in STOP_WORDS or ASKING.search(word)
                or _CJK_RUN.fullmatch(word) is None or word in named):
            continue
        out.append(word)
    return out


def _latin_aspects(question: str, named: str) -> list[str]:
    """The question's Latin content words of three letters or more that `named` does not contain: a Latin word
    counts whole or not at all, its letters saying nothing one by one."""
    return [w for w in _LATIN_WORD.findall(question.lower()) if len(w) > 2 and w not in named
            and w not in ANSWER_STOP_WORDS and w not in STOP_WORDS]


def _names_whole(question: str, chunk: ScoredChunk) -> bool:
    """Whether every content word of the question names the chunk's document — its title, or a heading above the
    chunk's own section ("员工福利有哪些？" over "员工福利说明 › 补贴"): the question asks about the document's
    subject as a whole, not about something said in one of its parts."""
    path = [p.strip() for p in chunk.context.split("›")]
    named = " ".join([chunk.document_title, *path[:-1]]).lower()
    asks = bool(_aspects(question, "") or _latin_aspects(question, ""))
    return asks and not _aspects(question, named) and not _latin_aspects(question, named)


def _partial(aspects: Sequence[str], text: str) -> float:
    """How much of the asked-about words the sentence says, a word's characters counting for their share when
    the whole word is not there (体重 → "8公斤重", 颜色 → "体呈银灰色", 树叶 → "其叶螺旋状")."""
    if not aspects:
        return 0.0
    found = 0.0
    for word in aspects:
        found += 1.0 if word in text else sum(ch in text for ch in word) / len(word)
    return found / len(aspects)


@dataclass(frozen=True)
class _Candidate:
    chunk_index: int  # 1-based, the [n] of the prompt
    position: int
    text: str
    score: float
    # The share of the question's words alone, before shape and partial-match credit.
    lexical: float = 0.0
    # The share of the question's asked-about words it says, counting words it has only in part.
    partial: float = 0.0
    # A table row: quoted as a line of its own, never run together with the next row.
    row: bool = False
    # A table row's own cells and its table's column names (see `_Unit`).
    cells: str = ""
    header: str = ""
    # A line of the document taken whole ("- 累计工作满10年…", "餐补：…", a table row), not a sentence of a paragraph:
    # it is quoted as a line of its own.
    item: bool = False

    @property
    def own(self) -> str:
        """What tells this unit from its neighbours: a table row's own cells, any other unit's text."""
        return self.cells if self.row else self.text


def _passages(picked: Sequence[_Candidate]) -> list[tuple[str, int]]:
    """Sentences that follow each other in one chunk are quoted as one passage with one citation, so a
    quote reads as the source wrote it; table rows and list items stay lines of their own, as in the document."""
    runs: list[list[_Candidate]] = []
    for c in picked:
        if runs and runs[-1][-1].chunk_index == c.chunk_index and runs[-1][-1].position + 1 == c.position \
                and not (c.row or c.item or runs[-1][-1].row or runs[-1][-1].item):
            runs[-1].append(c)
        else:
            runs.append([c])
    out = []
    for run in runs:
        text = run[0].text
        for c in run[1:]:
            text += c.text if _CJK_RUN.search(text[-1:]) or text.endswith(("。", "！", "？", "；")) else f" {c.text}"
        out.append((text, run[0].chunk_index))
    return out


def _key(text: str) -> str:
    return _NON_WORD.sub("", text.lower())


_ENUMERATOR = re.compile(r"^\s*(?:[0-9]+(?:\.[0-9]+)+\.?|第?[0-9一二三四五六七八九十]+[章节条部分.、)）]?"
                         r"|[(（][0-9一二三四五六七八九十]+[)）])\s*")


def _under_heading(text: str, chunk: ScoredChunk) -> str:
    """The quote led by the heading of its section when that heading holds a number or date of its own (beyond a
    section number) the quote does not: under "Version 4.3.0 (18 November 2026)" the line "New: schedules" says
    which release brought schedules only with its heading, as a reader sees it on the page. A question as heading
    (an FAQ's) is not repeated."""
    section = chunk.context.split("›")[-1].strip() if "›" in chunk.context else ""
    if not section or section.endswith(("?", "？")) or not re.search(r"\d", _ENUMERATOR.sub("", section, count=1)) \
            or _key(section) in _key(text):
        return text
    return f"{section}{'：' if is_chinese(section + text) else ': '}{text}"


def _labels(chunk: ScoredChunk) -> set[str]:
    """Keys of the texts that only name things: the document title and the section path."""
    parts = [chunk.document_title, *chunk.context.split("›")]
    return {_key(p) for p in parts if _key(p)}


def named_by(chunk: ScoredChunk) -> str:
    return chunk.context if chunk.document_title in chunk.context else f"{chunk.document_title} {chunk.context}"


def beyond_context(wanted: dict[str, float], chunk: ScoredChunk) -> dict[str, float] | None:
    """The question's terms that the chunk's title and heading do not already name; None when nothing
    but character pairs is left ("是什么" → 是什, 什么): the question asks about what they name."""
    named = terms(named_by(chunk))
    rest = {t: w for t, w in wanted.items() if t not in named}
    return rest if sum(rest.values()) >= 1.0 else None


_SEVERAL = re.compile(r"[、，,/&]|与|和|及|以及|\band\b|\bor\b", re.IGNORECASE)


def _section_words(wanted: dict[str, float], chunk: ScoredChunk) -> dict[str, float]:
    """The question's terms that the chunk's section heading names and its document title does not, when the
    heading names several things ("婚假、产假与陪产假"); otherwise none (a heading naming one thing names what
    every sentence under it is about, and must not favour the sentences that repeat it)."""
    heading = chunk.context.replace(chunk.document_title, " ")
    # A heading's own number ("五、出差补贴", "2.1 Scope") is not a list of things.
    if not any(_SEVERAL.search(_ENUMERATOR.sub("", part, count=1)) for part in heading.split("›")):
        return {}
    title = terms(chunk.document_title)
    section = terms(heading)
    return {t: w for t, w in wanted.items() if t in section and t not in title}


def _rerank(chunk: ScoredChunk) -> float:
    return float(chunk.stage_scores.get("rerank", chunk.score))


def overlap(wanted: dict[str, float], text: str) -> float:
    """Weighted share of the question's terms that `text` contains (a calendar word also in the days it stands for,
    `docmind.text.says`), in [0, 1]."""
    total = sum(wanted.values())
    if not total:
        return 0.0
    have = terms(text)
    return sum(w for t, w in wanted.items() if t in have or says(text, t)) / total


def _similarity(question: np.ndarray, sentences: np.ndarray, zh: bool, means: LanguageMeans | None,
                written_zh: bool | None = None) -> np.ndarray:
    """Cosine of each sentence (all in one language: Chinese when `written_zh`, by default the other language than
    the question's, `zh`) to the question, both less their language's mean when the means are known (plain cosine
    otherwise). Each language's mean is what its texts share whatever they say, and it weighs on some sentences
    more than on others (one holding English codes or words sits nearer an English question for that alone): less
    it, sentences compare by what they say, in either language (docs/decisions/cross-language.md). Plain cosines of
    the question's own language sit higher than those across for the language alone, so when the means are known
    but cannot be applied, sentences in the question's language are not scored (-inf)."""
    centred = means.centred(question, chinese=zh) if means is not None else None
    chinese = not zh if written_zh is None else written_zh
    written = means.centred(sentences, chinese=chinese) if centred is not None else None
    if written is None:
        return sentences @ question if chinese != zh or means is None else np.full(len(sentences), -np.inf)
    return written @ centred


_CLAUSE_END = re.compile(r"(?<=[；;])\s*")


def _side_words(sides: Sequence[str]) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """Each side's terms, and its own ones: those no other side has ("三四" of 三四年级 beside 五六年级)."""
    said = [terms(s) for s in sides]
    own = [{t: w for t, w in words.items() if not any(t in other for j, other in enumerate(said) if j != i)}
           for i, words in enumerate(said)]
    return said, own


def _side_clauses(text: str, side: int, own: Sequence[dict[str, float]]) -> str:
    """The clauses of `text` about side `side` when `text` states other sides in clauses of their own
    ("三、四年级每天不超过45分钟；五、六年级每天不超过60分钟。" for 三四年级: its first clause, and the second
    for 五六年级, so that each side quotes what it says); `text` otherwise. A clause is about the side whose own
    words (`own`, see `_side_words`) it says most of; a clause about no side stays with every side."""
    clauses = [c for c in _CLAUSE_END.split(text) if c.strip()]
    if len(clauses) < 2:
        return text
    fits = [[overlap(words, clause) for words in own] for clause in clauses]
    if not any(max(fit) > 0 and fit[side] < max(fit) for fit in fits):
        return text  # no clause is about another side
    if not any(fit[side] > 0 and fit[side] >= max(fit) for fit in fits):
        return text  # no clause is about this side
    kept = [clause for clause, fit in zip(clauses, fits, strict=True) if fit[side] >= max(fit)]
    joined = ("" if is_chinese(text) else " ").join(clause.strip() for clause in kept)
    if joined.endswith(("；", ";")):
        joined = joined[:-1] + ("。" if joined.endswith("；") else ".")
    return joined


def _also_about(side: int, said: Sequence[dict[str, float]], own: Sequence[dict[str, float]],
                per_side: Sequence[Sequence[_Candidate]]) -> list[_Candidate]:
    """What the other sides quoted that says more than half of side `side`'s words (`said`), its own ones (`own`,
    see `_side_words`) among them: a table row or a sentence that states both sides ("…食品中心温度≥70℃，禽肉类中心
    温度≥75℃") answers this side too, rather than the side being told nothing was found."""
    return [c for k, picked in enumerate(per_side) if k != side for c in picked
            if overlap(own[side], c.text) > 0 and overlap(said[side], c.text) > 0.5]


def _with_value(question: str, picked: list[_Candidate], candidates: Sequence[_Candidate],
                chunks: Sequence[tuple[int, ScoredChunk]], limit: int) -> list[_Candidate]:
    """Adds, when the question asks a kind of value (`chat.value_kinds`: how heavy, when, how long…) and no quoted
    unit states one, the best-scoring unit that does and is about the question: it shares a word with the question,
    or names the model or code asked about in its own text, its table's header or its section ("Weight: 4.9 kg; …;
    AC-500: 11.2 kg" for "How heavy is the AC-500?", under a header naming the AC-500). The confidence counts such a
    unit as the answer's evidence (`chat.confidence.missing_value`); a quote without it does not answer."""
    kind = asked_kind(question)
    if kind is None or any(states(kind, f"{c.header} {c.text}") for c in picked):
        return picked
    asked = codes(question)
    context = {i: f"{c.document_title} {c.context}" for i, c in chunks}
    have = {(c.chunk_index, c.position) for c in picked}

    def about(c: _Candidate) -> bool:
        if asked:
            return bool(asked & codes(f"{context.get(c.chunk_index, '')} {c.header} {c.text}"))
        return c.lexical > 0.01 / c.chunk_index + TIE or c.partial > 0

    return _with_best(picked, [c for c in candidates if (c.chunk_index, c.position) not in have
                               and states(kind, f"{c.header} {c.text}") and about(c)], limit)


def _with_range(question: str, picked: list[_Candidate], candidates: Sequence[_Candidate],
                limit: int) -> list[_Candidate]:
    """Adds, when the question names an amount (一万块, 10,000 yuan, 12年) and no quoted unit states a range holding
    it, the best-scoring unit that does (`chat.offline.amounts`): of a policy's brackets ("5000元以下", "5000元至
    20000元", "20000元以上"), the one the asked case falls in, which shares no word with the question."""
    asked = amounts(question)
    if not asked or any(holds(asked, c.text) for c in picked):
        return picked
    have = {(c.chunk_index, c.position) for c in picked}
    return _with_best(picked, [c for c in candidates if (c.chunk_index, c.position) not in have
                               and holds(asked, c.text)], limit)


def _with_best(picked: list[_Candidate], found: Sequence[_Candidate], limit: int) -> list[_Candidate]:
    """`picked` with the best-scoring of `found` (better-ranked chunk and earlier unit on ties) added, in place of
    the last pick when `limit` is reached; `picked` itself when nothing was found."""
    if not found:
        return picked
    best = max(found, key=lambda c: (c.score, -c.chunk_index, -c.position))
    return [*picked[:limit - 1], best] if len(picked) >= limit else [*picked, best]


def _frame(text: str) -> str:
    """A clause with its numbers left out: what the items of a list of cases share
    ("累计工作满年不满年的员工年休假为每年天")."""
    return _NUMBERS.sub("", _key(text))


def _with_alternatives(picked: list[_Candidate], candidates: Sequence[_Candidate], limit: int) -> list[_Candidate]:
    """Adds, to a quoted list item, the items of its list that say the same with other numbers and match the
    question as well: a document that gives a value per case ("满1年不满10年的员工，年休假为每年5天", "满10年不满20年…10
    天", "满20年…15天") answers a question that names no case with every case, and one of them alone reads as the whole
    answer. A question that names its case ("工作满10年年假几天") matches that item better and gets it alone."""
    out = list(picked)
    have = {(c.chunk_index, c.position) for c in picked}
    for c in picked:
        if not c.item:
            continue
        frame = _frame(c.text)
        for other in candidates:
            if len(out) >= limit or not other.item or other.chunk_index != c.chunk_index \
                    or (other.chunk_index, other.position) in have or other.lexical < c.lexical - TIE:
                continue
            if SequenceMatcher(None, frame, _frame(other.text), autojunk=False).ratio() >= SAME_FRAME:
                have.add((other.chunk_index, other.position))
                out.append(other)
    return out


_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")


def _could_write(entities: Sequence[Term], question: str, chunk: ScoredChunk, zh: bool) -> bool:
    """Whether `chunk` could write any of the entities of `question` (Chinese when `zh`): any of them in the question's
    language; in Chinese text only the English question's codes and acronyms (words with a digit, words it writes in
    capitals: AC-300, CADR, VPN); in English text only the Chinese question's Latin words."""
    if is_chinese(chunk.searchable_text) == zh:
        return bool(entities)
    if zh:
        return any(not _CJK_RUN.search(t.text) for t in entities)
    capitals = {w.lower() for w in _ACRONYM.findall(question)}
    return any(t.text in capitals or any(ch.isdigit() for ch in t.text) for t in entities)


def _words_cannot_choose(question: str, wanted: dict[str, float], chunks: Sequence[tuple[int, ScoredChunk]]) -> bool:
    """Whether the best-ranked chunk is in the other language than the question (Chinese against not) and no chunk
    in the question's language holds OWN_WORDS_FOUND of its words: then the question's words cannot tell which text
    answers it. Evidence in the question's own language that says most of what it asks is chosen by its words, as
    for a question whose best chunk is in its language: the reranker can put other-language text on the question's
    topic first ("What is the AC-500's price?" under a Chinese launch note), and the meaning of that text would then
    choose a quote that does not answer."""
    if not chunks:
        return False
    zh = is_chinese(question)
    if is_chinese(chunks[0][1].searchable_text) == zh:
        return False
    return not _said_in_own_language(wanted, chunks, zh)


def _said_in_own_language(wanted: dict[str, float], chunks: Sequence[tuple[int, ScoredChunk]], zh: bool) -> bool:
    """Whether some chunk in the question's language (Chinese when `zh`) holds OWN_WORDS_FOUND of `wanted`."""
    return any(overlap(wanted, f"{c.context} {c.content}") >= OWN_WORDS_FOUND for _, c in chunks
               if is_chinese(c.searchable_text) == zh)


# What a how-to question asks to be done: the words after its interrogative ("路由器怎么恢复出厂设置？" → 恢复出厂设置,
# "How do I reset the router?" → reset the router).
_HOW_TO = re.compile(r"(?:怎么|怎样|如何)(?!办|样|回事)(.+)|\bhow (?:do|can|should|would|to) (?:i |we |you )?(.+)",
                     re.IGNORECASE)


def _action(question: str) -> dict[str, float]:
    """The terms of what a how-to question asks to be done ({} for any other question, or when that part names
    nothing: "笔记本丢了怎么办？")."""
    found = _HOW_TO.search(question)
    return terms(next(g for g in found.groups() if g is not None)) if found else {}


_ENDS_SENTENCE = re.compile(r"[。！？.!?；;…」”\"')）]\s*$")


def _reading_order(chunks: Sequence[tuple[int, ScoredChunk]]):
    """A sort key putting sentences in the order their documents are read: each document where its best-ranked part
    was, its parts as the document has them (a part's parent is stored after the parts before it; a chunk's own id
    where it has no parent), and each part's sentences in turn."""
    documents: dict[int | None, int] = {}
    where: dict[int, tuple[int, int]] = {}
    for index, chunk in chunks:
        documents.setdefault(chunk.document_id, len(documents))
        stored = chunk.parent_id if chunk.parent_id is not None else \
            int(chunk.chunk_id) if chunk.chunk_id.isdigit() else index
        where[index] = (documents[chunk.document_id], stored)
    return lambda c: (*where.get(c.chunk_index, (len(documents), c.chunk_index)), c.chunk_index, c.position)


class ExtractiveAnswerer:
    """Never writes a claim of its own: every sentence is copied from the evidence and cited."""

    def __init__(self, *, max_sentences: int = 5, min_overlap: float = 0.12, chunk_floor: float = 0.5,
                 sentence_floor: float = 0.5, summary_sentences: int = 8, embedder: Embedder | None = None,
                 means: LanguageMeans | None = None) -> None:
        if max_sentences <= 0 or summary_sentences <= 0:
            raise ValueError("max_sentences and summary_sentences must be positive")
        for name, value in (("min_overlap", min_overlap), ("chunk_floor", chunk_floor),
                            ("sentence_floor", sentence_floor)):
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be within [0, 1]")
        self.max_sentences = max_sentences
        self.min_overlap = min_overlap
        # Chunks scoring below this share of the best chunk's rerank score are not quoted.
        self.chunk_floor = chunk_floor
        # Sentences matching the question less than this share of the best sentence are padding.
        self.sentence_floor = sentence_floor
        self.summary_sentences = summary_sentences
        # Multilingual sentence embeddings pick the sentence to quote when the best evidence is in another
        # language than the question: then no word of the question can match it (see `_across_languages`).
        self.embedder = embedder
        # Where the embedder puts each language (docmind.crosslingual): the question and the sentences are
        # compared less their language's mean.
        self.means = means

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], low_confidence: bool = False,
            shape: AnswerShape = AnswerShape.FACTS, sides: Sequence[str] = (),
            style: AnswerStyle | None = None, applied: Sequence[str] = (), unsaid: Sequence[str] = ()) -> str:
        """`style` (remembered language / brevity preferences) and `applied` (remembered facts behind a
        memory-aware question) are applied and named in the answer, never presented as evidence. `unsaid`: words of
        the question the evidence never says, named by the low-relevance label."""
        zh = is_chinese(question) if style is None or style.language is None else style.language == "zh"
        limit = self.max_sentences
        if style is not None and style.brevity == "short":
            limit = min(limit, SHORT_SENTENCES)
        elif style is not None and style.brevity == "detailed":
            limit = max(limit, DETAILED_SENTENCES)
        body = ""
        if shape is AnswerShape.SUMMARY:
            body = self._summary(self._summarised(chunks, question))
        elif shape is AnswerShape.COMPARISON and len(sides) >= 2:
            body = self._comparison(question, chunks, sides, zh)
        elif shape is AnswerShape.STEPS:
            body = self._steps(question, chunks)
        if not body:
            # A short-answer preference is kept to the letter: a short quote is not completed by the next sentence.
            body = self._facts(question, chunks, limit, complete=style is None or style.brevity != "short",
                               low=low_confidence)
        if not body:
            return (NO_EVIDENCE_ZH if zh else NO_EVIDENCE_EN) + memory_note(style, applied, zh)
        if any(is_chinese(line) != is_chinese(question) for line in body.splitlines() if line.strip()):
            # The Chinese words were looked for in the question's language only; a quote in the other language may
            # say them in its own words. A Latin name was looked for in both, and stays named.
            unsaid = [word for word in unsaid if not _CJK_RUN.search(word)]
        lead = (LEAD_LOW_ZH if zh else LEAD_LOW_EN) if low_confidence else (LEAD_ZH if zh else LEAD_EN)
        if low_confidence and unsaid:
            lead = (LEAD_UNSAID_ZH if zh else LEAD_UNSAID_EN).format(words=named_words(unsaid, zh=zh))
        return lead + "\n\n" + body + memory_note(style, applied, zh)

    # ------------------------------------------------------------------ shapes
    def _facts(self, question: str, chunks: Sequence[ScoredChunk], limit: int, *, complete: bool = True,
               low: bool = False) -> str:
        relevant = self._relevant(chunks, question)
        if _ASKS_LIST.search(question):
            listed = self._list(question, relevant) or self._parts(question, chunks, relevant)
            if listed:
                return listed
        picked = self._best(question, relevant, limit, complete=complete, low=low)
        return "\n".join(f"- {_cited(_under_heading(text, chunks[index - 1]), index)}"
                         for text, index in _passages(picked))

    def _comparison(self, question: str, chunks: Sequence[ScoredChunk], sides: Sequence[str], zh: bool) -> str:
        # A chunk is evidence for the side(s) it names best (title or section first, else its text): a passage
        # about 重复扣款 that mentions 退款 in passing belongs to 重复扣款; no sentence is quoted for two sides.
        # A side named by the chunk's title or section owns it outright.
        owners: dict[int, set[int]] = {}
        for i, c in enumerate(chunks, start=1):
            named = [overlap(terms(side), named_by(c)) for side in sides]
            fit = named if max(named) >= 0.5 else [overlap(terms(side), c.searchable_text) for side in sides]
            owners[i] = {k for k, f in enumerate(fit) if f >= 0.5 and f >= max(fit) - 1e-9}
        said, own_words = _side_words(sides)
        quoted: set[str] = set()
        per_side: list[list[_Candidate]] = []
        for k, side in enumerate(sides):
            own = [(i, c) for i, c in enumerate(chunks, start=1) if k in owners[i]]
            # A table row's cells are not clauses: it stays whole.
            picked = [c if c.row else replace(c, text=_side_clauses(c.text, k, own_words))
                      for c in self._best(side, own, max(2, self.max_sentences // 2), exclude=quoted)]
            quoted.update(_key(c.text) for c in picked)
            per_side.append(picked)
        sections = []
        for k, side in enumerate(sides):
            picked = per_side[k] or _also_about(k, said, own_words, per_side)
            lines = [f"- {_cited(text, index)}" for text, index in _passages(picked)]
            if not lines:
                lines = [f"- 知识库中没有找到关于“{side}”的内容。" if zh else
                         f"- The knowledge base has nothing about \"{side}\"."]
            sections.append(f"**{side}**\n" + "\n".join(lines))
        return "\n\n".join(sections)

    def _steps(self, question: str, chunks: Sequence[ScoredChunk]) -> str:
        """The numbered steps of the relevant chunk whose list (with the line that leads it and its section) says
        most of the question; "" when some other sentence, item or row of the evidence says more of it: a how-to
        question ("考评结果不满意怎么申诉？") is answered by the clause it asks about, not by a numbered list that
        happens to stand nearby ("结果应用: 1. 年终奖系数…"). Nor is a list that never says what is to be done (the
        words after the question's 怎么 or "how do I"): "路由器怎么恢复出厂设置？" is not answered by a list of the
        router's sales figures."""
        wanted = terms(question)
        action = _action(question)
        relevant = self._relevant(chunks, question)
        if _words_cannot_choose(question, wanted, relevant):
            return ""  # the quote is chosen by meaning across the languages (`_across_languages`)
        best: tuple[float, int, list[tuple[str, str]]] | None = None
        elsewhere = 0.0
        for index, chunk in relevant:
            lines = chunk.content.splitlines()
            numbered = [(k, m) for k, line in enumerate(lines) if (m := _STEP.match(line))]
            steps = [(m.group(1), REF.sub("", m.group(2)).strip()) for _, m in numbered]
            # A step's own line never says more than its whole list, so every unit of the evidence can be compared.
            elsewhere = max([elsewhere, *(overlap(wanted, u.text) for u in _units(chunk.content))])
            if len(steps) < 2:
                continue
            lead = next((line for line in reversed(lines[:numbered[0][0]]) if line.strip()), "")
            section = chunk.context.split("›")[-1] if "›" in chunk.context else ""
            said = " ".join([section, lead, *(text for _, text in steps)])
            if action and overlap(action, said) == 0:
                continue
            fit = overlap(wanted, said) + 0.01 / index
            if best is None or fit > best[0]:
                best = (fit, index, steps)
        if best is None or best[0] < elsewhere:
            return ""
        _, index, steps = best
        return "\n".join(f"{number}. {_cited(text.rstrip('；;'), index)}" for number, text in steps[:12])

    @staticmethod
    def _list(question: str, relevant: Sequence[tuple[int, ScoredChunk]]) -> str:
        """The items of the list among the `relevant` chunks whose lead line (the heading or the line ending in a
        colon right above it) best says what the question asks about, each cited: "会上定了哪些待办事项？" under
        "四、待办事项". "" when no list of two items or more has a lead saying at least LIST_LEAD of it."""
        best: tuple[float, int, list[str]] | None = None
        for index, chunk in relevant:
            title = chunk.document_title.lower()
            aspects, latin = _aspects(question, title), _latin_aspects(question, title)
            if not aspects and not latin:
                continue
            section = chunk.context.split("›")[-1].strip() if "›" in chunk.context else ""
            for lead, items in _lists(chunk.content, section):
                lowered = lead.lower()
                # A Latin word counts whole or not at all: its letters say nothing one by one.
                fit = (_partial(aspects, lowered) * len(aspects) + sum(w[:-1] in lowered for w in latin)) \
                    / (len(aspects) + len(latin))
                if len(items) >= 2 and fit >= LIST_LEAD and (best is None or fit > best[0]):
                    best = (fit, index, items)
        if best is None:
            return ""
        _, index, items = best
        return "\n".join(f"- {_cited(REF.sub('', _MARKUP.sub('', item)).strip(), index)}"
                         for item in items[:LIST_ITEMS])

    def _parts(self, question: str, chunks: Sequence[ScoredChunk], relevant: Sequence[tuple[int, ScoredChunk]]) -> str:
        """What each retrieved part of a document says first (`_summary`), when the question asks which things
        its document holds as a whole ("员工福利有哪些？" of "员工福利说明": health, allowances, housing fund — each a
        section), one of its `relevant` chunks says so, and at least two of its parts were retrieved; "" otherwise.
        One sentence of one part would answer for all of them."""
        documents = {c.document_id for _, c in relevant if _names_whole(question, c)}
        parts = [(i, c) for i, c in enumerate(chunks, start=1) if c.document_id in documents]
        return self._summary(parts) if len(parts) >= 2 else ""

    def _summarised(self, chunks: Sequence[ScoredChunk], question: str) -> list[tuple[int, ScoredChunk]]:
        """The retrieved parts of the documents a summary is asked of: those of the chunks relevant to the
        question ("总结一下退换货政策" names the policy, not its other neighbours in the ranking)."""
        documents = {c.document_id for _, c in self._relevant(chunks, question)}
        return [(i, c) for i, c in enumerate(chunks, start=1) if c.document_id in documents]

    def _summary(self, chunks: Sequence[tuple[int, ScoredChunk]]) -> str:
        """Each part's leading sentence (then its second, while there is room), in document order."""
        per_part: list[list[_Candidate]] = []
        seen: set[str] = set()
        for index, chunk in chunks:
            sentences = self._sentences(index, chunk, seen)
            # A line of running text that ends no sentence (a title, "Updated 10 September 2025", a byline) labels the
            # part rather than saying something of it; it is quoted only when the part has nothing else.
            said = [c for c in sentences if c.row or c.item or _ENDS_SENTENCE.search(c.text)]
            per_part.append(said or sentences)
        picked: list[_Candidate] = []
        for rank in range(3):
            for part in per_part:
                if rank < len(part) and len(picked) < self.summary_sentences:
                    picked.append(part[rank])
        picked.sort(key=_reading_order(chunks))
        return "\n".join(f"- {_cited(c.text, c.chunk_index)}" for c in picked)

    # ------------------------------------------------------------------ helpers
    def _relevant(self, chunks: Sequence[ScoredChunk], question: str = "") -> list[tuple[int, ScoredChunk]]:
        """Chunks near the best one's rerank score and, when some chunk names what the question is about
        (a document title it contains, else its rare names and codes), only chunks that name it too."""
        indexed = list(enumerate(chunks, start=1))
        if not indexed:
            return []
        top = max(_rerank(c) for _, c in indexed)
        if top > 0:
            indexed = [(i, c) for i, c in indexed if _rerank(c) >= self.chunk_floor * top]
        entities: tuple[Term, ...] = ()
        if question:
            # A document title the question contains names its subject best; else the rare words jieba does not
            # know (names, codes). A rare word it knows (党派, 祖籍, 专辑) is more often what is asked about the
            # subject, which the evidence that names the subject may not repeat.
            titles = [c.document_title for c in chunks]
            salient, titled = salient_terms(question, names=titles), set(names_in(question, titles))
            entities = tuple(t for t in salient if t.text in titled) or \
                tuple(t for t in salient if t.rare and len(t.text) >= 2 and not in_vocabulary(t.text))
        if entities:
            zh = is_chinese(question)
            # A chunk in the other language cannot write the question's words, only its codes and acronyms. With
            # none of those to look for it stays when it ranks at least as high as the best chunk that names the
            # subject (the multilingual embedding, not its words, put it there), even where text in the question's
            # own language says most of what it asks: that text is often on the topic without answering, and the
            # answer hears both (`_best`).
            named = {i: coverage(entities, c.searchable_text) for i, c in indexed}
            best = max(named.values(), default=0.0)
            if best > 0:
                bar = max(_rerank(c) for i, c in indexed if named[i] >= best)
                unnamed = {i for i, c in indexed if named[i] < 0.5 * best and _rerank(c) >= bar
                           and not _could_write(entities, question, c, zh)}
                indexed = [(i, c) for i, c in indexed if named[i] >= 0.5 * best or i in unnamed]
        return indexed

    def _best(self, question: str, chunks: Sequence[tuple[int, ScoredChunk]], limit: int,
              exclude: set[str] | None = None, *, complete: bool = True, low: bool = False) -> list[_Candidate]:
        wanted = terms(question)
        # Sentences already quoted elsewhere in the answer count as seen.
        seen = set(exclude or ())
        # Every sentence of a section is about what its title and heading name, so a sentence is matched
        # against the rest of the question (a sentence that merely repeats the title does not outrank the
        # answer), weighted by how much of the question the chunk's title and heading name (relative to the
        # best chunk): a sentence from a document the question is not about counts a quarter.
        named = {index: overlap(wanted, named_by(chunk)) for index, chunk in chunks}
        top_named = max(named.values(), default=0.0)
        shapes = _shapes(question)
        listing = bool(_ASKS_LIST.search(question))
        candidates = []
        for index, chunk in chunks:
            weight = max(0.25, named[index] / top_named) if top_named > 0 else 1.0
            rest = beyond_context(wanted, chunk)
            sentences = self._sentences(index, chunk, seen)
            if rest is None:
                # The title and heading name the whole question ("扣款无回调呢？", "X 是什么？"): the section
                # is the answer, and its opening says most about it — unless the heading names several things
                # ("婚假、产假与陪产假") and a clause of the section names the one asked about.
                # A table's rows are not an opening and what follows it: each row is one entry, told apart from
                # the others by its first cell ("Commission up to 100% of quota"), as a clause by its name.
                section = _section_words(wanted, chunk)
                scores, lexical = [], []
                for k, c in enumerate(sentences):
                    if c.row:
                        own = overlap(wanted, _row_label(c.text))
                        scores.append(named[index] * (NAMED_CLAUSE + own) * weight)
                        lexical.append(named[index] * own * weight)
                    else:
                        scores.append((named[index] / (1 + k) + NAMED_CLAUSE * overlap(section, c.text)) * weight)
                        lexical.append(scores[-1])
                partials = [0.0] * len(sentences)
            else:
                # The sentence's share of the question's words, plus credit for having the shape of the fact asked
                # for and for words it shares in part (a paraphrase often keeps a character: 体重 → 公斤重).
                aspects = _aspects(question, named_by(chunk).lower())
                # The question's words that the section heading (not the document title) names count too, at
                # half weight: they tell apart the clauses of a heading that names several things
                # ("婚假、产假与陪产假"), while a title naming the subject leaves the ranking as it was.
                # A table row's first cell names its entry as such a heading names a clause: the question's words
                # it says count at the same half weight, those the title names included ("commission" in
                # "Commission up to 100% of quota" under a commission plan's title).
                # A table row is matched on its own cells: the column names every row repeats ("Plan B: Channel
                # Sales") name the table, as a heading names its section, and count as the heading's words do.
                # They choose the table, not how many of its rows are quoted — unless the question asks which
                # things ("年会都有什么奖品？"): then each row holds one, and the column it names is the answer.
                named_words = _section_words(wanted, chunk)
                columns = [NAMED_CLAUSE * overlap(rest, c.header) if c.row else 0.0 for c in sentences]
                lexical = [(overlap(rest, c.own) + NAMED_CLAUSE * overlap(named_words, c.text)
                            + (NAMED_CLAUSE * overlap(wanted, _row_label(c.text)) if c.row else 0.0)
                            + (column if listing else 0.0)) * weight
                           for c, column in zip(sentences, columns, strict=True)]
                partials = [_partial(aspects, c.own.lower()) for c in sentences]
                scores = [lex + (SHAPE_BONUS * _shape_fit(shapes, c.text) + PARTIAL_BONUS * part
                                 + (0.0 if listing else column)) * weight
                          for c, lex, part, column in zip(sentences, lexical, partials, columns, strict=True)]
            # A small rank prior breaks ties in favour of the better-ranked chunk.
            candidates += [replace(c, score=score + 0.01 / c.chunk_index, lexical=lex + 0.01 / c.chunk_index,
                                   partial=part)
                           for c, score, lex, part in zip(sentences, scores, lexical, partials, strict=True)]
        asked = codes(question)
        candidates = [c for c in candidates if not _other_code(asked, c.text)] if asked else candidates
        if not candidates:
            return []
        across = self._across_languages(question, wanted, chunks, candidates, limit)
        if across:
            across = _with_range(question, _with_value(question, across, candidates, chunks, limit), candidates, limit)
            picked = self._with_references(across, candidates, limit, SHORT_QUOTE if complete else 0)
            return sorted(picked, key=lambda c: (c.chunk_index, c.position))
        ranked = sorted(candidates, key=lambda c: (-c.score, c.chunk_index, c.position))
        # How many: the sentences whose own words match above the floor. Which: the best by words, shape and
        # partly shared words together.
        floor = max(self.min_overlap, self.sentence_floor * max(c.lexical for c in candidates))
        picked = ranked[:min(sum(c.lexical >= floor for c in candidates), limit)]
        if not picked and (ranked[0].score >= self.min_overlap or ranked[0].partial >= PARTIAL_QUOTE):
            # No sentence shares enough words, but one has the shape or part of the words asked for (体呈银灰色 for
            # 身体 and 颜色): it is quoted with its chunk's opening, which says what the chunk is about.
            opening = next(c for c in candidates if c.chunk_index == ranked[0].chunk_index)
            picked = [opening] if opening is ranked[0] else [opening, ranked[0]]
        first = min(c.chunk_index for c in candidates)
        if not picked:
            # Retrieval chose these chunks although the words differ: quote the best-ranked chunk's opening.
            picked = [c for c in candidates if c.chunk_index == first][:2]
        zh = is_chinese(question)
        language = {i: is_chinese(c.searchable_text) for i, c in chunks}
        # The best-ranked evidence is always heard. When it is in another language than the question, the best-ranked
        # chunk in the question's own language is heard too, by its words: a chunk the embedding put first across
        # languages may be about something else.
        heard = [first]
        if language.get(first, zh) != zh:
            heard += [i for i, _ in chunks if i > first and language[i] == zh][:1]
        picked = self._heard(question, picked, ranked, chunks, heard, limit)
        picked = _with_range(question, _with_value(question, picked, candidates, chunks, limit), candidates, limit)
        if low and language.get(first, zh) == zh:
            # The evidence in the question's language matches it only weakly: the best-ranked chunk in the other
            # language, which its words cannot reach, may say what it lacks. Heard after the value asked is found,
            # so that a value in the other language does not stand in for one the question's language states.
            picked = self._heard(question, picked, ranked, chunks,
                                 [i for i, _ in chunks if i > first and language[i] != zh][:1], limit)
        picked = self._with_references(_with_alternatives(picked, candidates, limit), candidates, limit,
                                       SHORT_QUOTE if complete else 0)
        picked.sort(key=lambda c: (c.chunk_index, c.position))  # document order reads naturally
        return picked

    def _heard(self, question: str, picked: list[_Candidate], ranked: Sequence[_Candidate],
               chunks: Sequence[tuple[int, ScoredChunk]], heard: Sequence[int], limit: int) -> list[_Candidate]:
        """`picked` with the best sentence of each chunk of `heard` (1-based indices) none of whose sentences is
        picked, in place of the last picks when `limit` is reached. In another language than the question, no word
        of the question can say which sentence of a chunk is best: the closest in meaning is, as when the question's
        words choose nothing at all (`_across_languages`)."""
        zh = is_chinese(question)
        joined: list[_Candidate] = []
        for index in heard:
            if any(c.chunk_index == index for c in picked):
                continue
            own = [c for c in ranked if c.chunk_index == index]
            chunk = [(i, c) for i, c in chunks if i == index]
            if chunk and is_chinese(chunk[0][1].searchable_text) != zh:
                own = self._closest(question, own, chunk) or own
            joined += own[:1]
        return [*picked[:max(0, limit - len(joined))], *joined] if joined else picked

    def _across_languages(self, question: str, wanted: dict[str, float], chunks: Sequence[tuple[int, ScoredChunk]],
                          candidates: Sequence[_Candidate], limit: int) -> list[_Candidate]:
        """The sentences closest in meaning to the question (`_closest`) when the best-ranked chunk is in another
        language than the question (Chinese against not) and no chunk in the question's language holds
        OWN_WORDS_FOUND of its words (`wanted`, the question's terms); [] otherwise or without an embedder. Word
        overlap ranks such sentences by the codes and numbers they happen to share, so the multilingual embedding
        that retrieved the chunks chooses instead."""
        if self.embedder is None or not chunks or not _words_cannot_choose(question, wanted, chunks):
            return []
        # Every relevant chunk, best first: the top one often holds the topic but not the clause asked about, which a
        # neighbour of it in the ranking does — in either language, since the question's words said too little of
        # any text in its own to choose.
        return self._closest(question, candidates, chunks)[:min(CROSS_LANGUAGE_QUOTES, limit)]

    def _closest(self, question: str, candidates: Sequence[_Candidate],
                 chunks: Sequence[tuple[int, ScoredChunk]]) -> list[_Candidate]:
        """The first MAX_EMBEDDED of `candidates` (in ranking and document order) that belong to `chunks`, closest in
        meaning to the question first, each compared less its own language's mean (`_similarity`); [] without an
        embedder or when it fails."""
        chinese = {i: is_chinese(c.searchable_text) for i, c in chunks}
        context = {i: c.context for i, c in chunks}
        own = [c for c in sorted(candidates, key=lambda c: (c.chunk_index, c.position))
               if c.chunk_index in context][:MAX_EMBEDDED]
        if self.embedder is None or not own:
            return []
        try:
            vectors = self.embedder.embed_passages([f"{context[c.chunk_index]} {c.text}".strip() for c in own])
            asked = self.embedder.embed_query(question)
            similarity = np.full(len(own), -np.inf)
            for language in {chinese[c.chunk_index] for c in own}:
                rows = [k for k, c in enumerate(own) if chinese[c.chunk_index] == language]
                similarity[rows] = _similarity(asked, vectors[rows], is_chinese(question), self.means,
                                               written_zh=language)
        except Exception:  # the choice by words still stands
            return []
        return [own[k] for k in sorted(range(len(own)), key=lambda k: -float(similarity[k]))]

    @staticmethod
    def _with_references(picked: list[_Candidate], candidates: Sequence[_Candidate], limit: int,
                         short: int) -> list[_Candidate]:
        """Adds the sentences a quoted sentence cannot be read without: the one before it when it opens by
        pointing back, and the ones after it that open by pointing back at it (its continuation)."""
        at = {(c.chunk_index, c.position): c for c in candidates}
        have = {(c.chunk_index, c.position) for c in picked}
        out = list(picked)
        for c in picked:
            if len(out) >= limit + CONTINUATION:
                break
            position = c.position
            while _POINTS_BACK.match(at[(c.chunk_index, position)].text) and position - c.position > -CONTINUATION:
                before = at.get((c.chunk_index, position - 1))
                if before is None:
                    break
                position -= 1
                if (c.chunk_index, position) not in have:
                    have.add((c.chunk_index, position))
                    out.append(before)
            position = c.position
            while position - c.position < CONTINUATION:
                after = at.get((c.chunk_index, position + 1))
                # A sentence continues the quoted one when it points back at it, or when the quoted one is too
                # short to state a whole fact and this one bears on the question (more than the rank prior).
                # A table row is a whole record: it neither continues into the next row nor is continued.
                if after is None or c.row or after.row or not (
                        _POINTS_BACK.match(after.text) or position == c.position and len(_key(c.text)) < short
                        and (after.lexical > 0.01 / after.chunk_index or after.partial > 0)):
                    break
                position += 1
                if (c.chunk_index, position) not in have:
                    have.add((c.chunk_index, position))
                    out.append(after)
        return out

    @staticmethod
    def _sentences(index: int, chunk: ScoredChunk, seen: set[str]) -> list[_Candidate]:
        labels = _labels(chunk)
        out = []
        for position, (raw, row, cells, header, item) in enumerate(_units(chunk.content)):
            if _HEADING.match(raw):
                continue
            # Strip list/heading markup and any [n] the source text had: they'd read as our citations.
            text = REF.sub("", _MARKUP.sub("", raw)).strip()
            key = _key(text)
            # Lead-ins ("用户反馈退款未到账时：") introduce what follows; they say nothing on their own.
            if len(key) < MIN_SENTENCE_CHARS or key in seen or key in labels or text.endswith((":", "：")):
                continue
            seen.add(key)
            out.append(_Candidate(index, position, text, 0.0, row=row, cells=cells, header=header, item=item))
        return out
