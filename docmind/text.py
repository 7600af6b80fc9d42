"""Chinese/English text helpers: stop words, jieba tokens and keywords, salient terms, character bigrams."""
from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import jieba

# Sentence terminators a compression window may be snapped to (Chinese and English). Splitting text into
# sentences is done differently where it matters: the chunker needs offsets and keeps closing quotes
# (kb/ingestion/chunker.py), citation parsing keeps trailing [n] markers with their sentence (chat/citations.py).
SENTENCE_ENDS = frozenset("。！？；.!?\n")

RARE_IDF_SHARE = 0.7

# A Markdown table's lines as the parsers write them (kb.ingestion.parsers.tables): a row, its cells in group 1
# (a "|" inside a cell is written "\\|"), and the rule under the header row.
MARKDOWN_TABLE_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$")
# The question and the answer lines of an FAQ ("Q: Does it work without Wi-Fi?" then "A: Yes. …", "问：…" then "答：…"):
# a pair is one entry, which chunking keeps together and the offline answer quotes together.
# A bullet or bold markup may open either line ("- **Q:** …", "**答：**…").
_FAQ_OPENING = r"^\s*(?:[-*•]\s+)?(?:\*\*|__)?"
FAQ_QUESTION = re.compile(_FAQ_OPENING + r"(?:Q|Question|问|问题)\s*\d{0,3}\s*[:：.．]\s*\S", re.IGNORECASE)
FAQ_ANSWER = re.compile(_FAQ_OPENING + r"(?:A|Answer|答|回答)\s*\d{0,3}\s*[:：.．]\s*\S", re.IGNORECASE)


def faq_pair(line: str, following: str) -> bool:
    """Whether `line` asks an FAQ's question and `following` (the next line of text) answers it."""
    return bool(FAQ_QUESTION.match(line) and FAQ_ANSWER.match(following))
MARKDOWN_TABLE_RULE = re.compile(r"^[ \t]*\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*$")
_PUNCT_OR_SPACE = re.compile(r"^[\W_]+$", re.UNICODE)
_SPACES = re.compile(r"\s+")

# The stop lists below differ on purpose, so they are built from shared parts rather than merged into one.
# Single CJK characters are listed for readability only: salient_terms and the extractive answerer drop
# every single-character CJK token anyway, so those entries change nothing there.

# Function words that carry no signal in either language.
FUNCTION_WORDS = frozenset("""
的 了 和 是 在 也 就 都 而 及 与 或 之 其 这 那 个 着 吗 呢 吧 啊 把 被 让 给 对 从 向 于 以 为 等 中 上 下
the a an of to in on and or is are was were be for with by at as it this that from what which who how
""".split())
# What a question says around its subject: interrogatives, pronouns, auxiliaries, politeness.
QUESTION_WORDS = frozenset("""
什么 哪 几 多少 怎么 怎样 如何 为什么 么 有 请问 请 一下 可以 能 会 我 你 他 她 它 我们
about can could did do does please should when where why would
""".split())
_PUNCTUATION = frozenset("， 。 ！ ？ ； ： 、 “ ” （ ） , . ! ? ; : ( )".split())

# salient_terms (grader, reranker blend, compression window): words that appear in the question but never
# in the evidence, so counting them would make every chunk look like it misses part of the query.
STOP_WORDS = FUNCTION_WORDS | QUESTION_WORDS | frozenset("""
哪个 哪些 哪里 哪儿 谁 何 怎么样 为何 是否 有没有 没有 告诉 你们 他们 时候 多久 何时 哪年 哪一年 哪位
是不是 能否 要 想 又 并 将 由 此 该 各 每 呀
been its no not these those whom whose will
""".split())
# The extractive answerer scores evidence sentences by overlap with the question; it keeps negations and the
# time words above (they can decide which sentence answers) and drops the conversational "tell me" / "you".
# "mean" frames "What does E2 mean?" as 是什么意思 does: the definition asked for says "E2 means …" of every code.
ANSWER_STOP_WORDS = FUNCTION_WORDS | QUESTION_WORDS | frozenset("们 i you me tell mean".split())
# Milvus' BM25 analyzer filter (docmind/indexes/lexical.py). Its content is baked into the stored index: changing it
# needs `manage.py kb_reindex`, and tests/docmind/test_text.py pins it.
LEXICAL_STOP_WORDS: list[str] = sorted(FUNCTION_WORDS | _PUNCTUATION)


@lru_cache(maxsize=1)
def _jieba():
    # jieba sets its own logger to DEBUG on import, overriding LOGGING (docmind/apps.py does the same).
    jieba.setLogLevel(logging.WARNING)
    return jieba


@lru_cache(maxsize=1)
def _idf() -> tuple[dict[str, float], float]:
    """jieba's bundled IDF table: rarity without corpus statistics (unknown words count as rare)."""
    _jieba()
    # heavy: jieba.analyse reads its IDF table (about 1 s) on import
    import jieba.analyse

    table = jieba.analyse.default_tfidf
    return table.idf_freq, float(table.median_idf)


def rarity(word: str) -> float:
    """How rare `word` is in text at large: its idf in jieba's bundled table over the median (most of jieba's
    vocabulary is rare), capped at 1.5; a word the table does not know (a name, a code) counts as rare (1.2)."""
    idf, median = _idf()
    return min(1.5, idf.get(word, median * 1.2) / median)


# A word of the language that names something particular, not an everyday one (需要, 使用, 之前, 分别): jieba's idf
# over its median (`rarity`) at least this. jieba's cuts of unknown character runs (能补, 一平) are not words of its
# vocabulary and do not count either.
CONTENT_RARITY = 0.5


def is_content_word(word: str) -> bool:
    return in_vocabulary(word) and rarity(word) >= CONTENT_RARITY


# jieba keeps a personal pronoun and the modal or adverb after it as one word (它会, 他会): such a word is the pronoun.
GLUED_PRONOUN = re.compile(r"^(它们|他们|她们|它|他|她)[会能是有要也就还都在可将已曾又]$")


@lru_cache(maxsize=4096)
def _cut_for_search(text: str) -> tuple[str, ...]:
    return tuple(_jieba().cut_for_search(text))


def words(text: str) -> list[str]:
    """jieba's accurate-mode segmentation: each character in exactly one word."""
    return _jieba().lcut(text)


def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased jieba search-mode tokens (a long word and its sub-words), without stop words and
    punctuation: the same tokenizer mode the BM25 index uses."""
    out = []
    for raw in _cut_for_search(text.lower()):
        token = raw.strip()
        if token and token not in STOP_WORDS and not _PUNCT_OR_SPACE.match(token):
            out.append(token)
    return tuple(out)


def keywords(text: str, k: int) -> list[str]:
    """Top-k TF-IDF terms of a document by jieba's bundled IDF table (no corpus statistics needed)."""
    _jieba()
    # heavy: jieba.analyse reads its IDF table (about 1 s) on import
    import jieba.analyse

    return [t for t in jieba.analyse.extract_tags(text[:20000], topK=k) if len(t) >= 2 and not t.isdigit()]


@dataclass(frozen=True)
class Term:
    text: str
    weight: float
    rare: bool


# A Chinese word is often written shortened, by dropping characters of the full form and keeping the rest in
# order (年假 for 年休假, 补卡 for 补打卡, 车补 for 车辆补贴): a word of up to this many characters also matches text
# that has its characters in order with at most one other character between neighbours. Longer words are rarely
# shortened that way, and a looser gap would let unrelated characters that happen to follow each other match.
SHORTENED_MAX_CHARS = 4
_CJK_WORD = re.compile(rf"[\u4e00-\u9fff]{{2,{SHORTENED_MAX_CHARS}}}")


# A word of the question in capitals that spells a function word (IT, US) is an acronym, not the word: it is kept
# as written and matched in the evidence as written (see `has_acronym`).
_ACRONYM = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,5}(?![A-Za-z0-9])")


# A verb-object word (离合词: 请假, 补卡, 出差, 加班) asked with how long or how often is split by the count:
# "请几天假", "补几次卡", "加几个小时班". Documents write the word whole (请假3天, 每月补卡不超过3次), and
# jieba cuts the split form into a verb and a lone character that match nothing. Only a count of the action
# itself (times, days, hours…) is moved, not a count of things ("买几个苹果"), and only before the clause's end
# or its final particle, where a lone character after the count is that verb's object ("请几天假吗"; "等几天再说"
# is left alone).
_SPLIT_WORD = re.compile(r"([\u4e00-\u9fff])((?:几|多少)个?(?:次|回|趟|遍|天|周|星期|月|小时|钟头|分钟))"
                         r"([\u4e00-\u9fff])(?=[吗呢啊吧呀]?(?:[？?。！!，,；;\s]|$))")
_PARTICLES = frozenset("吗呢了啊吧呀的")


def joined_separable(text: str) -> str:
    """The question with each verb-object word split by a count put back together, the count after it:
    "一个月能补几次卡？" → "一个月能补卡几次？", "能请几天假吗？" → "能请假几天吗？"."""
    return _SPLIT_WORD.sub(lambda m: m.group(0) if m.group(3) in _PARTICLES else m.group(1) + m.group(3) + m.group(2),
                           text)


# "How many" of a unit: 几 and a measure word.
HOW_MANY = re.compile(r"几[个种次年月日天号点位名岁人条项遍回家台所座倍级周分秒页张件块届部本]")
_ONE_CJK = re.compile(r"[\u4e00-\u9fff]")


def unknown_words(text: str) -> list[str]:
    """Pairs of single Chinese characters, neither a stop word, that jieba's accurate mode left apart between longer
    words: a word it does not know, most often a shortened one (年假 → 年 / 假), which would otherwise be lost with
    the single characters. A longer run of single characters is a string of one-character words (S级最多占 →
    级 / 最 / 多 / 占), not one word."""
    found, run = [], ""
    for word in (*words(text.lower()), ""):
        if _ONE_CJK.fullmatch(word) and word not in STOP_WORDS:
            run += word
            continue
        if len(run) == 2:
            found.append(run)
        run = ""
    return found


def salient_terms(query: str, names: Iterable[str] = ()) -> tuple[Term, ...]:
    """The query's content words, weighted by length and rarity; sub-words of a longer term are dropped.

    Weight = min(len, 4) × idf / median idf (capped at 1.5): long and rare words such as names
    carry the question; a term counts as rare (an "entity") when its idf is at least
    RARE_IDF_SHARE of the median (jieba's median is high: most of its vocabulary is rare).

    `names` are the titles of the documents the query is matched against. A title the query contains is one
    rare term whatever jieba makes of it: it does not know most names ("元皇后" → 元 / 皇后, where 皇后 is in
    every empress's article; "黄华麒是哪个…" → 黄华麒是), and a one-character name (蓍) would be dropped.
    """
    idf, median = _idf()
    seen: dict[str, Term] = {}
    rest = query.lower()
    for name in names_in(query, names):
        seen[name] = Term(name, round(min(len(name), 4) * rarity(name), 4), True)
        rest = rest.replace(name, " ")
    for acronym in _ACRONYM.findall(query):
        if acronym.lower() in STOP_WORDS:
            seen.setdefault(acronym, Term(acronym, round(min(len(acronym), 4) * rarity(acronym.lower()), 4), True))
    for token in (*tokens(rest), *unknown_words(rest)):
        # 哪款 / 哪种 / 哪年, 几天 / 几位 / 几次: interrogatives jieba does not know; the answer states the thing or
        # the number, never these words.
        if token.startswith("哪") or HOW_MANY.fullmatch(token):
            continue
        if len(token) == 1 and not token.isascii():
            continue  # single CJK characters are too unspecific to count as evidence of a match
        weight = min(len(token), 4) * rarity(token)
        seen.setdefault(token, Term(token, round(weight, 4), idf.get(token, math.inf) >= RARE_IDF_SHARE * median))
    terms = list(seen.values())
    # cut_for_search yields 泡泡 and 泡泡堂: keep only the longest so a hit is not counted twice.
    return tuple(t for t in terms if not any(t.text != o.text and t.text in o.text for o in terms))


def in_vocabulary(word: str) -> bool:
    """jieba's IDF table knows the word: a word of the language (党派, 祖籍, 专辑), not a name or code it has never
    seen (泡泡堂, nexon)."""
    return word in _idf()[0]


# "元皇后 (北齐孝昭帝)", "夜来香（夹竹桃科）": a title's trailing parenthesis tells same-named subjects apart; questions
# name the subject without it.
_DISAMBIGUATION = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")


def names_in(query: str, titles: Iterable[str]) -> list[str]:
    """The titles (without a disambiguating parenthesis, lower-cased) that the query contains, longest first,
    none inside a longer one found. A one-character title counts only when the character is rare (蓍, not 花),
    and a Latin title only as a whole word of at least two characters."""
    lowered = query.lower()
    idf, median = _idf()
    found: list[str] = []
    for name in sorted({_DISAMBIGUATION.sub("", t).strip().lower() for t in titles if t}, key=len, reverse=True):
        if not name or name not in lowered or any(name in longer for longer in found):
            continue
        if name.isascii():
            if len(name) < 2 or not re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", lowered):
                continue
        elif len(name) == 1 and idf.get(name, math.inf) < RARE_IDF_SHARE * median:
            continue
        found.append(name)
    return found


def normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def char_bigrams(text: str) -> list[str]:
    """Overlapping two-character grams, in order (none for fewer than two characters)."""
    return [text[i:i + 2] for i in range(len(text) - 1)]


def bigrams(text: str) -> frozenset[str]:
    """Character bigrams of the whitespace-normalised text (a single character is its own gram)."""
    compact = normalise(text)
    if len(compact) < 2:
        return frozenset([compact]) if compact else frozenset()
    return frozenset(char_bigrams(compact))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@lru_cache(maxsize=8192)
def _spread(word: str) -> re.Pattern[str]:
    return re.compile("[\u4e00-\u9fff]?".join(re.escape(ch) for ch in word))


def has_acronym(text: str, acronym: str) -> bool:
    """Whether `text` holds `acronym` as written, a word of its own ("IT服务台", not "it" or "security")."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(acronym)}(?![A-Za-z0-9])", text) is not None


# Calendar words a text says without writing them: a weekend by its days ("周六、周日：8:00—21:00", "Saturday"), the
# working week by its span ("周一至周五", "Monday to Friday"). A question names the period; a timetable lists the days.
_WEEKEND = re.compile(r"周[六日]|星期[六日天]|礼拜[六日天]|双休|\bsaturdays?\b|\bsundays?\b", re.IGNORECASE)
_WORKING_WEEK = re.compile(r"(?:周|星期|礼拜)一\s*(?:至|到|—|-|~|～)\s*(?:周|星期|礼拜)?五|"
                           r"\bmondays?\s*(?:to|through|till|until|–|—|-)\s*fridays?\b", re.IGNORECASE)
SAID_BY = {"周末": _WEEKEND, "双休日": _WEEKEND, "weekend": _WEEKEND, "weekends": _WEEKEND,
           "工作日": _WORKING_WEEK, "weekday": _WORKING_WEEK, "weekdays": _WORKING_WEEK}


def says(text: str, word: str) -> bool:
    """Whether `text` says the calendar word `word` (lower-cased) in the words it is written in (`SAID_BY`)."""
    pattern = SAID_BY.get(word)
    return pattern is not None and pattern.search(text) is not None


def contains(text: str, word: str) -> bool:
    """Whether lower-cased `text` contains `word`, or, for a short Chinese word, its full form (see
    SHORTENED_MAX_CHARS), or, for a calendar word, the days it stands for (`says`)."""
    if word in text:
        return True
    return _CJK_WORD.fullmatch(word) is not None and _spread(word).search(text) is not None or says(text, word)


def coverage(terms: tuple[Term, ...], text: str) -> float:
    """Weighted share of `terms` that occur in `text` (a shortened Chinese word counts: `contains`; an acronym only
    as written: `has_acronym`); 0 when there are no terms."""
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 0.0
    haystack = text.lower()
    return sum(t.weight for t in terms if (has_acronym(text, t.text) if _ACRONYM.fullmatch(t.text)
                                           else contains(haystack, t.text))) / total


# A heading in text without markup: a short line standing alone between blank lines, with no sentence punctuation,
# and body text after it. 40 characters hold a long Chinese heading and an English one of six or seven words.
PLAIN_HEADING_MAX_CHARS = 40
# Numbering a heading may open with: "1.", "2.3", "一、", "（二）", "第三章".
_NUMBERING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*[.)、．]?|[一二三四五六七八九十]+、|"
                        r"[（(][一二三四五六七八九十\d]{1,3}[）)]|第[一二三四五六七八九十百零\d]+[章节条部分篇])\s*")
# What a sentence has and a heading has not: sentence and clause punctuation, a period before a space or the end.
_SENTENCE_MARK = re.compile(r"[。！？!?；;，,：:]|\.(?:\s|$)")


def _heading_like(line: str) -> bool:
    """Could this one line be a heading written without markup: short, a word in it, no sentence punctuation?"""
    line = line.strip()
    if not 2 <= len(line) <= PLAIN_HEADING_MAX_CHARS or line[0] in "#-*•>|":
        return False
    rest = _NUMBERING.sub("", line)
    return bool(rest) and any(ch.isalpha() for ch in rest) and not _SENTENCE_MARK.search(rest)


def title_only(text: str) -> bool:
    """Whether the text is a single heading-like line: a title or heading that ended up alone in a passage (the
    first line of a document before its first section). It names what follows; it states nothing."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) == 1 and _heading_like(lines[0])


def plain_headings(text: str) -> set[int]:
    """Indexes (in `text.splitlines()`) of the lines that are headings written without markup: heading-like, a
    paragraph of their own (a blank line or the text's edge on both sides) and followed by a paragraph that is not
    heading-like, so that a list written one item per paragraph stays text; the text's first line is one too when
    such a heading follows it."""
    lines = text.splitlines()
    found: set[int] = set()
    for i, line in enumerate(lines):
        if not _heading_like(line) or i > 0 and lines[i - 1].strip() or i + 1 < len(lines) and lines[i + 1].strip():
            continue
        following = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        if following is None:
            continue
        end = next((j for j in range(following, len(lines)) if not lines[j].strip()), len(lines))
        if end - following > 1 or not _heading_like(lines[following]):
            found.add(i)
    # A text's first line standing alone right before a heading is the title above its first section ("Support
    # Service Level Agreement", then "Support hours"); further down, such a pair is more often two list items.
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and first not in found and _heading_like(lines[first]) \
            and not (first + 1 < len(lines) and lines[first + 1].strip()):
        following = next((j for j in range(first + 1, len(lines)) if lines[j].strip()), None)
        if following in found:
            found.add(first)
    return found
