"""`ConfidenceCalibrator`: how likely the evidence answers the question — the score, the band, abstention.

One calibrated probability drives everything the user sees: abstain ("not in the knowledge base")
below `abstain_below`, answer with the low-relevance label below `medium_from`, and the confidence
badge's band. Because all three come from the same number, they cannot disagree.

The probability is a logistic model over evidence signals that work with or without an LLM (the
answer has not been written yet when it is needed). Its weights were fitted on the CMRC 2018 trial
set by `bench/fit_confidence.py` (see bench/README.md).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

import cn2an

from chat.citations import REF, split_sentences
from chat.offline.extractive import ASKING, beyond_context, codes, overlap, quotable, terms
from chat.types import Assessment, Verdict
from chat.value_kinds import asked_kind, states
from docmind.language import is_chinese
from docmind.text import (
    ANSWER_STOP_WORDS,
    GLUED_PRONOUN,
    HOW_MANY,
    STOP_WORDS,
    char_bigrams,
    contains,
    coverage,
    is_content_word,
    salient_terms,
    words,
)
from kb.retrieval.types import GradeResult, ScoredChunk, Source

TOP_N = 3
# A question that never names its subject abstains only below this share of the usual bar. On the trial set,
# such questions that the KB answers scored P(answerable) 0.11-0.16, held-back ones 0.001-0.04 (bench/README.md).
UNNAMED_SUBJECT_BAR = 1 / 3
FEATURES = ("rerank_top1", "lex_coverage", "entity_coverage", "best_sentence", "sentence_margin", "best_in_top",
            "focus_match", "rerank_margin", "branches_agree", "open_ended", "asks_quantity", "answer_focus",
            "sentence_cover", "best_said")
# Questions whose answer is an explanation, a description or a list (why, how, what is it like, which ones):
# their answer spans several sentences, so any answer — quoted or written — is more often incomplete.
_OPEN_ENDED = re.compile(r"为什么|为何|何以|因何|原因|怎么|怎样|如何|什么样|哪些|哪几|特点|特征|特色|影响|"
                         r"作用|意义|过程|经历|经过|评价|表现|背景|区别|分别|异同|有什么|\bwhy\b|\bhow\b|\bdescribe\b|\bexplain\b|"
                         r"\bwhat (?:are|were) the\b", re.IGNORECASE)
# Questions asking for a number, a size or a date: one short fact, which a sentence that matches the
# question states whole far more often than it states a whole explanation.
_QUANTITY = re.compile(r"多少|几[个年月日天岁次种名位人本部条座届]|多大|多高|多长|多重|多远|多久|多深|多宽|"
                       r"哪一?年|何时|什么时候|哪一?天|年份|日期|面积|人口|"
                       r"\bhow (?:many|much|long|old|big|far|high)\b|\bwhen\b|\bwhat year\b", re.IGNORECASE)
# Fitted by bench/fit_confidence.py on the trial set, two logistic regressions: "answerable" (the KB holds
# the answer: answerable against held-back questions) and "right" (among answerable questions, the extractive
# answer contains the gold answer), both on every other question and measured on the rest. The score is
# P(answerable) × P(right | answerable). Each model keeps only the signals that carried it on held-out
# questions (see the script).
ANSWERABLE_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "rerank_top1": 16.69, "lex_coverage": 0.0, "entity_coverage": 0.0, "best_sentence": 5.6,
    "sentence_margin": 0.0, "best_in_top": 0.0, "focus_match": 0.0, "rerank_margin": 0.0, "branches_agree": 0.0,
    "open_ended": 0.0, "asks_quantity": 0.0, "answer_focus": 0.0, "sentence_cover": 3.36, "best_said": 0.0,
    "bias": -12.35,
})
RIGHT_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "rerank_top1": 0.06, "lex_coverage": 0.0, "entity_coverage": 0.0, "best_sentence": 0.0,
    "sentence_margin": 0.0, "best_in_top": 0.0, "focus_match": 0.0, "rerank_margin": 0.0, "branches_agree": 0.0,
    "open_ended": -0.29, "asks_quantity": 1.04, "answer_focus": 1.64, "sentence_cover": 2.4, "best_said": 3.56,
    "bias": -4.43,
})
# A word the question asks about that its evidence never says marks a question next to what the documents cover
# ("公司有健身房吗？" over the benefits policy, "采购的付款可以预付吗？" over the payment terms): the evidence is on the
# topic, not on what was asked, and however well it matches otherwise it is quoted under the low-relevance label.
# Only content words count (`docmind.text.is_content_word`): everyday words a paraphrase drops or replaces do not.
# Nor do the words that ask rather than name: how long or how much (多长时间, 多久), an amount or ordinal, which the
# evidence writes in its own numerals (七天 as 7天, 第一笔 as 第一期), and what the asker wants done with the
# document (总结, 要点).
_NOT_NAMING = re.compile(r"多[长久大远高重宽深少]|"
                         r"^第?[0-9〇零一二两三四五六七八九十百千万亿]+[个天年月日周次笔块元份条项名位期台层倍岁]|"
                         r"总结|概括|概述|介绍|要点|归纳|梳理")
# A word that points at something said before (这时候, 那里, 这种) names nothing the evidence could say.
_POINTS_BACK = re.compile(r"^(?:这|那|此)(?:时候?|会儿|里|儿|边|种|样|次|些|天|段时间)$")
# How far below `medium_from` a LOW verdict's final score stays at most: one percentage point, as the badge shows it.
LOW_MARGIN = 0.01
# What a question says around what it asks: function words, interrogatives ("哪个", "谁", "何时") and the
# words salient_terms also ignores.
_NOT_CONTENT = ANSWER_STOP_WORDS | STOP_WORDS
_CJK = re.compile(r"[\u4e00-\u9fff]")
# A word in Latin letters, with its inner hyphens and dots ("Wi-Fi", "iPad", "v4.2").
_LATIN = re.compile(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*")


def content_runs(text: str) -> tuple[str, ...]:
    """The text's runs of content words (jieba's accurate mode), lower-cased, split at stop words, "how many"
    words (几天) and punctuation: "黄华麒是哪个大学毕业的？" → ("黄华麒是", "大学毕业") whatever way jieba cuts
    inside a run."""
    runs, current = [], ""
    for word in words(text.lower()):
        word = word.strip()
        if not word or word in _NOT_CONTENT or HOW_MANY.fullmatch(word) or not any(ch.isalnum() for ch in word):
            if current:
                runs.append(current)
            current = ""
            continue
        current += word
    if current:
        runs.append(current)
    return tuple(runs)


def covered(runs: Sequence[str], text: str) -> list[bool]:
    """Per character of `runs`: does the text contain it as part of a pair of neighbouring run characters, or of
    that pair with one character between (a shortened word's full form, see `docmind.text.contains`; a
    one-character run: the character itself)? Counting characters rather than pairs, a question pair that
    spans two words ("学毕" in 大学毕业) costs nothing once each word is found ("毕业于…大学")."""
    lowered = text.lower()
    marks: list[bool] = []
    for run in runs:
        if not _CJK.search(run):  # a Latin word or number counts whole, not by its letter pairs
            whole = re.search(rf"(?<![a-z0-9]){re.escape(run)}(?![a-z0-9])", lowered) is not None
            marks.extend([whole] * len(run))
            continue
        found = [len(run) == 1 and run in lowered] * len(run)
        for i, pair in enumerate(char_bigrams(run)):
            if contains(lowered, pair):  # 年假 is covered by 年休假 as by 年假
                found[i] = found[i + 1] = True
        marks.extend(found)
    return marks


def cover_share(runs: Sequence[str], text: str) -> float:
    """Share of the characters of `runs` that `text` covers (see `covered`), in [0, 1]."""
    marks = covered(runs, text)
    return sum(marks) / len(marks) if marks else 0.0


def best_covered(runs: Sequence[str], chunks: Sequence[ScoredChunk]) -> tuple[float, str]:
    """The evidence sentence of the top chunks that covers most of `runs` (read with its chunk's title and
    section), and that share; (0.0, "") without sentences. Sentences as the offline answer quotes them
    (`quotable`): a numbered step is one, never its number alone ("1.") and its text apart."""
    best, sentence = 0.0, ""
    for chunk in chunks[:TOP_N]:
        for candidate in quotable(chunk.content):
            share = cover_share(runs, f"{chunk.context} {candidate}")
            if share > best or not sentence:
                best, sentence = share, candidate
    return best, sentence


def _latin_key(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")


def latin_names(question: str) -> list[str]:
    """The names a Chinese question writes in Latin letters in lower or mixed case ("iPad", "Linux", "Windows", "wifi",
    "5GHz"): products, systems and standards, which Chinese text writes the same way, so evidence that never writes
    one is about something else. Not an acronym in capitals ("CEO", "HR", "SLA"): Chinese text often writes it in
    its own words (总经理, 人力资源部). Nor codes ("AC-300", "E2"), which `missing_value` and the answerer read. Of an
    English question, whose words are all Latin and which a document paraphrases freely, only the names written with a
    capital inside ("HomeKit", "iPhone", "PayPal"): a brand or product's own spelling, which no paraphrase replaces."""
    if not is_chinese(question):
        return [word for word in _LATIN.findall(question) if _INNER_CAPITAL.search(word)]
    names: list[str] = []
    for word in _LATIN.findall(question):
        if len(_latin_key(word)) >= 2 and any(ch.islower() for ch in word) and word.lower() not in _NOT_CONTENT:
            names.append(word)
    return names


def _unsaid_names(question: str, text: str) -> list[str]:
    """The question's Latin names (`latin_names`) that `text` never writes, compared without case, hyphens or dots
    ("wifi" is "Wi-Fi"), a plural's ending left out ("iPads")."""
    written = {_latin_key(w) for w in _LATIN.findall(text)}

    def said(key: str) -> bool:
        return any(w == key or _plural(w, key) or len(w) > 2 and _plural(key, w) for w in written)

    missing: list[str] = []
    for name in latin_names(question):
        if not said(_latin_key(name)) and name not in missing:
            missing.append(name)
    return missing


# A number that picks one of several things of a kind: "3号会议室", "57號貨架", "room No. 5", "#12".
_NUMBERED = re.compile(r"(\d+|[零〇一二两兩三四五六七八九十百]+)\s*[号號]|(?:\bNo\.?|#|\bnumber)\s*(\d+)",
                       re.IGNORECASE)


def _unsaid_numbers(question: str, text: str) -> list[str]:
    """The numbers the question picks a thing by (`_NUMBERED`) that `text` never writes, as digits standing alone
    or as a Chinese numeral before 号 or 號: evidence about 37号货架 says nothing of 57号货架, however much else it
    shares. A date's day ("5月3号") is one too, and evidence that gives that date writes its number."""
    missing: list[str] = []
    for match in _NUMBERED.finditer(question):
        written = match.group(0).strip()
        value = _number(match.group(1) or match.group(2))
        if value is None or written in missing:
            continue
        numeral = cn2an.an2cn(value)
        if re.search(rf"(?<![\d.]){value}(?![\d])", text) or f"{numeral}号" in text or f"{numeral}號" in text:
            continue
        missing.append(written)
    return missing


def _number(numeral: str) -> int | None:
    if numeral.isdigit():
        return int(numeral)
    try:
        return int(cn2an.cn2an(numeral, "smart"))
    except (ValueError, TypeError):  # not a numeral cn2an reads ("百")
        return None


def _plural(longer: str, shorter: str) -> bool:
    """`longer` is `shorter` with an ending of one or two letters ("ipads", "macoses")."""
    return longer.startswith(shorter) and 0 < len(longer) - len(shorter) <= 2


def unsaid_words(question: str, chunks: Sequence[ScoredChunk]) -> tuple[str, ...]:
    """The words of the question that name something and that none of the top chunks says (title, section or
    text): the Latin names of a Chinese question (`latin_names`) and the numbers a question picks a thing by
    (`_unsaid_numbers`), in evidence of either language; and its Chinese content words (`is_content_word`), whole,
    shortened as `docmind.text.contains` reads it, or each of its characters somewhere, unless the best evidence is
    in another language than the question, whose words it cannot share."""
    top = list(chunks[:TOP_N])
    if not top:
        return ()
    text = " ".join(f"{c.document_title} {c.context} {c.content}" for c in top).lower()
    found: list[str] = _unsaid_names(question, text) + _unsaid_numbers(question, text)
    if is_chinese(top[0].searchable_text) != is_chinese(question):
        return tuple(found)
    cut = [w.strip() for w in words(question.lower()) if w.strip()]
    framing = _framing(cut)
    for i, word in enumerate(cut):
        if i in framing or len(word) < 2 or not all(_CJK.fullmatch(ch) for ch in word) \
                or word in _NOT_CONTENT or ASKING.search(word) or _NOT_NAMING.search(word) \
                or GLUED_PRONOUN.match(word) or _POINTS_BACK.match(word) or not is_content_word(word):
            continue
        if not contains(text, word) and not all(ch in text for ch in word) and word not in found:
            found.append(word)
    return tuple(found)


def missing_value(question: str, chunks: Sequence[ScoredChunk]) -> str:
    """The kind of value the question asks for (`chat.value_kinds`: 多久, 几点, 多少台, how heavy…) when no quotable
    sentence, item or table row of the top chunks that is about the rest of the question states one ("年终奖什么时候
    发？" over the bonus coefficients, "How heavy is the AC-500?" over its features); "" when it asks none or one is
    stated."""
    kind = asked_kind(question)
    if kind is None:
        return ""
    rest = kind.asked.sub(" ", question)
    # A paraphrase in the evidence keeps the characters of what the question names (年假 in 年休假): a sentence that
    # has every one of them is about it too.
    # A word that counts (一次, 两个) says how often or how many, not what about: a sentence sharing only it is about
    # something else ("做一次核磁" and "一次性收取100元").
    wanted = {term: weight for term, weight in terms(rest).items() if not _NOT_NAMING.search(term)}
    characters = set(_CJK.findall("".join(content_runs(rest))))
    # A model or other code the question names ("CM-2") is what it is about: a sentence about another one (R5's
    # sales) does not count, however many other words it shares; one that names no code may be about it.
    named = codes(rest)
    for chunk in chunks[:TOP_N]:
        # As the offline answer would quote them: a table row with its header ("金额（元）：86,400"), whose unit
        # only the header names.
        for sentence in quotable(chunk.content):
            # A heading or title names what its sentences are about, and often states the date they hold for.
            text = f"{chunk.document_title} {chunk.context} {sentence}"
            said = text.lower()
            found = codes(text) if named else set()
            related = (not wanted or overlap(wanted, said) > 0 or characters and all(ch in said for ch in characters)) \
                and (not found or bool(named & found))
            if related and states(kind, text):
                return ""
    return kind.name


# Interrogatives that ask for a value (not 吗/呢, which ask whether: about the thing itself).
_WH = re.compile(r"^(?:什么|啥|哪|哪些|哪个|哪种|哪家|哪里|多少|怎样|怎么|怎么样|如何|何|几|为何|为什么)$")
# Words between a named kind of value and its interrogative ("别名是什么", "职务有哪些").
_LINKS = frozenset({"是", "有", "为", "叫", "的"})


def _framing(cut: Sequence[str]) -> set[int]:
    """Indexes of the words that frame what is asked rather than name it: right next to an interrogative that asks
    for a value ("什么颜色", "担任什么", "如何评价"), or before one across 是/有 ("别名是什么"). The evidence states the
    value (银灰色, 又名…) without the kind's name, so such a word missing from it says nothing."""
    found: set[int] = set()
    for i, word in enumerate(cut):
        if not _WH.match(word):
            continue
        found.add(i + 1)
        if word == "多少":  # "毛利率(是)多少": a quantity is asked of the thing named before it, not of a kind
            continue
        found.add(i - 1)
        j = i - 1
        while j >= 0 and cut[j] in _LINKS:
            j -= 1
        found.add(j)
    return found


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-40.0, min(40.0, x))))


def evidence_features(*, question: str, chunks: Sequence[ScoredChunk], grade: GradeResult) -> dict[str, float]:
    """Signals in [0, 1]: rerank score of the best chunk, salient-term coverage of the top chunks, coverage
    of the question's entities (its rare terms) in the top KB chunks, and the best single sentence's match."""
    top = list(chunks[:TOP_N])
    salient = salient_terms(question, names=[c.document_title for c in top])
    rare = tuple(t for t in salient if t.rare and len(t.text) >= 2) or \
        ((max(salient, key=lambda t: t.weight),) if salient else ())
    kb_top = [c.searchable_text for c in top if c.source == Source.KB] or [c.content for c in top]
    entity = max((coverage(rare, text) for text in kb_top), default=0.0) if rare else 0.0
    wanted = terms(question)
    scored = sorted(((overlap(wanted, f"{c.context} {s}"), rank) for rank, c in enumerate(top)
                     for s in split_sentences(c.content)), reverse=True)
    best, best_rank = scored[0] if scored else (0.0, 1)
    second = scored[1][0] if len(scored) > 1 else 0.0
    # How well the best sentence matches what the question asks beyond what its title already names
    # (the offline answerer's own criterion); 1 when the title names the whole question.
    focus = 0.0
    for c in top:
        rest = beyond_context(wanted, c)
        focus = max(focus, 1.0 if rest is None else max((overlap(rest, s) for s in split_sentences(c.content)),
                                                         default=0.0))
    cover, _ = best_covered(content_runs(question), top)
    reranked = [float(c.stage_scores.get("rerank", c.score)) for c in chunks[:2]]
    # Both retrieval branches (dense and lexical) found the best chunk: two independent kinds of evidence.
    agree = 1.0 if {"vector", "bm25"} <= set(chunks[0].stage_scores) else 0.0
    return {"rerank_top1": float(grade.rerank_top1), "lex_coverage": float(grade.lex_coverage),
            "entity_coverage": float(entity), "best_sentence": float(best),
            "sentence_margin": float(best - second), "best_in_top": 1.0 if best_rank == 0 else 0.0,
            "focus_match": float(focus),
            "rerank_margin": max(0.0, reranked[0] - reranked[1]) if len(reranked) > 1 else 0.0,
            "branches_agree": agree, "open_ended": 1.0 if _OPEN_ENDED.search(question) else 0.0,
            "asks_quantity": 1.0 if _QUANTITY.search(question) else 0.0,
            # Until the answer exists, the best sentence stands for it: it is what the offline answer quotes.
            "answer_focus": float(focus),
            # The best sentence's match by content characters rather than terms: what jieba happens to cut
            # a question into, and the pairs across its word boundaries, do not lower it.
            "sentence_cover": float(cover),
            # Until the answer exists it is taken to say the best-covering sentence (see `answer_features`).
            "best_said": 1.0}


def answer_focus(*, question: str, chunks: Sequence[ScoredChunk], answer: str) -> float:
    """How much of what the question asks (beyond what the top chunks' titles and sections name) the written
    answer says, in [0, 1]; 1 when a title names the whole question. Quoted or written, an answer that does
    not mention what was asked is less likely to answer it."""
    wanted = terms(question)
    text = REF.sub("", answer)
    best = 0.0
    for chunk in chunks[:TOP_N]:
        rest = beyond_context(wanted, chunk)
        best = max(best, 1.0 if rest is None else overlap(rest, text))
    return best


def answer_features(*, question: str, chunks: Sequence[ScoredChunk], answer: str) -> dict[str, float]:
    """The signals read from the written answer: `answer_focus`, and `best_said` — how much of the evidence
    sentence that best covers the question the answer says (content characters, see `covered`). When the
    answer says something else than the sentence the question's own words point at, the two ways of picking
    disagree, and such answers are wrong far more often; a paraphrase of that sentence still counts."""
    _, sentence = best_covered(content_runs(question), chunks)
    text = REF.sub("", answer)
    return {"answer_focus": answer_focus(question=question, chunks=chunks, answer=answer),
            "best_said": cover_share(content_runs(sentence), text) if sentence else 0.0}


class ConfidenceCalibrator:
    def __init__(self, *, abstain_below: float, medium_from: float, high_from: float,
                 answerable: Mapping[str, float] = ANSWERABLE_WEIGHTS, right: Mapping[str, float] = RIGHT_WEIGHTS,
                 weak_rerank_below: float = 0.0) -> None:
        if not 0 <= abstain_below <= medium_from <= high_from <= 1:
            raise ValueError("need 0 <= abstain_below <= medium_from <= high_from <= 1")
        if not 0 <= weak_rerank_below <= 1:
            raise ValueError("need 0 <= weak_rerank_below <= 1")
        # The rerank score under which the retrieval grader calls evidence weak (grader.low_threshold).
        self.weak_rerank_below = weak_rerank_below
        for weights in (answerable, right):
            if set(weights) != {*FEATURES, "bias"}:
                raise ValueError(f"weights must name exactly {', '.join(FEATURES)} and bias")
        self.abstain_below, self.medium_from, self.high_from = abstain_below, medium_from, high_from
        self.answerable, self.right = dict(answerable), dict(right)

    @staticmethod
    def probability(weights: Mapping[str, float], features: Mapping[str, float]) -> float:
        return _sigmoid(weights["bias"] + sum(weights[name] * features[name] for name in FEATURES))

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], grade: GradeResult,
            unnamed_subject: bool = False) -> Assessment:
        """ABSTAIN when the KB most likely lacks the answer, LOW when it may, else ANSWER; the score is the
        probability that the answer will be right, capped below `medium_from` for a LOW verdict.

        `unnamed_subject`: the question refers to something it never names ("此品牌的台湾代理人是谁？" opening a
        conversation). Its evidence then scores as if the KB lacked the subject, so "not in the knowledge
        base" needs stronger proof: the abstention bar drops to a share of itself and the closest evidence is
        quoted under the low-relevance label instead."""
        if not chunks:
            return Assessment(score=0.0, verdict=Verdict.ABSTAIN, features=MappingProxyType({}))
        features = evidence_features(question=question, chunks=chunks, grade=grade)
        answerable = self.probability(self.answerable, features)
        score = answerable * self.probability(self.right, features)
        abstain_below = self.abstain_below * (UNNAMED_SUBJECT_BAR if unnamed_subject else 1.0)
        verdict = Verdict.ABSTAIN if answerable < abstain_below else Verdict.LOW \
            if answerable < self.medium_from else Verdict.ANSWER
        if is_chinese(chunks[0].searchable_text) != is_chinese(question) \
                and grade.rerank_top1 >= self.weak_rerank_below:
            # The best evidence is in another language than the question: the signals above count shared words,
            # which a translation does not share, so they can tell neither that the KB lacks the answer nor
            # that this evidence holds it. Only the multilingual embedding ranked that chunk first; it is quoted
            # under the low-relevance label either way. A rerank score the grader calls weak, though, judges
            # meaning rather than shared words: then the KB most likely lacks the answer, and it abstains.
            verdict = Verdict.LOW
        unsaid = unsaid_words(question, chunks) if verdict is Verdict.ANSWER else ()
        missing = missing_value(question, chunks) if verdict is Verdict.ANSWER and not unsaid else ""
        if unsaid or missing:
            verdict = Verdict.LOW
        if verdict is not Verdict.ANSWER:
            score = min(score, answerable)
        features = {**features, "p_answerable": answerable, "unsaid_words": float(len(unsaid)),
                    "value_missing": 1.0 if missing else 0.0}
        return Assessment(score=score, verdict=verdict, features=MappingProxyType(features), unsaid=unsaid)

    def on_answer(self, *, assessment: Assessment, answer: str, question: str,
                  chunks: Sequence[ScoredChunk]) -> Assessment:
        """The assessment re-estimated on the written answer: P(right) from what the answer actually says
        instead of the best evidence sentence. P(answerable) and the verdict do not change."""
        features = assessment.features
        if assessment.verdict is Verdict.ABSTAIN or not answer or not {*FEATURES, "p_answerable"} <= set(features):
            return assessment
        written = {**features, **answer_features(question=question, chunks=chunks, answer=answer)}
        score = written["p_answerable"] * self.probability(self.right, written)
        if assessment.verdict is Verdict.LOW:
            score = min(score, written["p_answerable"])
        return replace(assessment, score=score, features=MappingProxyType(written))

    def reads_low(self, assessment: Assessment, citation_coverage: float | None = None) -> bool:
        """An answering verdict whose final band is low — its score re-estimated on the written answer, as `finish`
        weighs it by what the answer's citations cover (a comparison saying one side is missing cites half of it):
        the badge will say low, so the answer's own words should as well."""
        return assessment.verdict is Verdict.ANSWER \
            and self.finish(assessment=assessment, citation_coverage=citation_coverage)[1] == "low"

    def finish(self, *, assessment: Assessment, citation_coverage: float | None) -> tuple[float, str]:
        """The answer's final (score, band). An answer that cites little of what it says is trusted less;
        it is never trusted more than its evidence, so a LOW start never ends in a better band."""
        if assessment.verdict is Verdict.ABSTAIN:
            return assessment.score, "none"
        score = assessment.score
        if citation_coverage is not None:
            score *= 0.5 + 0.5 * min(1.0, max(0.0, citation_coverage))
        if assessment.verdict is Verdict.LOW:
            # Within the low band, so the badge's figure never contradicts its label ("low, 78 %"): a LOW verdict
            # can come with a high score when the evidence is in another language or never says an asked word.
            return min(score, max(0.0, self.medium_from - LOW_MARGIN)), "low"
        return score, self.band(score)

    def band(self, score: float) -> str:
        return "high" if score >= self.high_from else "medium" if score >= self.medium_from else "low"
